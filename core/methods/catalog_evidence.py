"""Catalog facts as evidence (settings.catalog_evidence): a sub-question that asks only what the catalog records
about a photo (its species or any higher taxon, its date, month or year, its place, its licence) is answered from
the photo's catalog fields when it has them, and from the picture (the judge) when it does not.

What a question asks comes as structure where a reader can give it: the rule book of the world in use says which of its
species a question names (`RuleBook.catalog_topics`, by scientific name); otherwise the question is read against the
catalog's own vocabulary (its taxon and common names, month names, years, ISO dates, Creative Commons licence codes, a
WEST,SOUTH,EAST,NORTH box, the named places of settings.named_places). Either way a question counts as a catalog
question only when nothing is left of it once the named things and the words that frame every yes/no question are taken
out ("Is there a Mallard in the photo?" is one; "Is the Mallard feeding?" is not: the catalog cannot say "feeding").

A catalog answer is certain: p_yes 1.0 or 0.0, reason "catalog: <field> = <value>". A photo that lacks the field is
sent to the judge, and its reason says that the catalog records no such field and the answer was read from the
picture. The rerank (core/methods/rerank.py) ranks a photo whose catalog contradicts one of the questions after
every photo it does not contradict, so a catalogued look-alike never outranks photos catalogued as the named
species."""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Iterable, Sequence

from core.contracts.records import Photo
from core.contracts.world import GENERIC, CatalogTopic, RuleBook
from core.licences import matches, parse_licence, parse_licence_filter

log = logging.getLogger(__name__)

# words that frame a yes/no question about a photo without asking for anything in it
FRAME = frozenset(
    "a an the is are was were be been being does do did can could has have had it its it's this that these those "
    "there here their they them of and or to in on at from during within inside photo photos picture pictures "
    "image images shown show shows showing visible any some organism individual "
    "species kind type subject taken observed photographed recorded seen under licensed licenced licence "
    "license match matches description described taxon member genus family order class phylum kingdom box "
    "bounding area region".split())
MONTHS = {name: i for i, name in enumerate(
    "January February March April May June July August September October November December".split(), start=1)}
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'.-]*[A-Za-z0-9]|[A-Za-z0-9]")
_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_YEAR = re.compile(r"\b(1[89]\d\d|20\d\d)\b")
_NUMBER = r"-?\d{1,3}(?:\.\d+)?"
_BOX = re.compile(rf"(?<![\w.-]){_NUMBER}(?:\s*,\s*{_NUMBER}){{3}}(?![\w.])")  # WEST,SOUTH,EAST,NORTH
_LICENCE = re.compile(r"\b(?:cc[\s_-]?0|cc[\s_-]?by(?:[\s_-](?:nc|sa|nd))*(?:[\s_-]\d\.\d)?|public[\s-]domain)\b",
                      re.IGNORECASE)
MAX_NAME_WORDS = 6  # longest taxon or place name looked for in a question
# rank of a catalog name -> the photo's field at that rank (genus also reads the first word of the species)
RANK_FIELD = {"species": "scientific_name", "common name": "common_name", "genus": "genus", "family": "family",
              "order": "order", "class": "class_name", "phylum": "phylum", "kingdom": "kingdom"}
FIELD_LABEL = {"scientific_name": "species", "common_name": "common name", "class_name": "class"}


@dataclass(frozen=True)
class Vocabulary:
    """What the catalog can name: taxon and common names (lower case -> rank) and named places (lower case ->
    (name as written, box))."""

    names: dict[str, str] = field(default_factory=dict)
    places: dict[str, tuple[str, tuple[float, float, float, float]]] = field(default_factory=dict)

    @classmethod
    def of(cls, taxon_names: Iterable[tuple[str, str]], places: dict | None = None) -> "Vocabulary":
        names: dict[str, str] = {}
        for name, rank in taxon_names:
            names.setdefault(" ".join(str(name).split()).lower(), rank)
        return cls(names, {k.lower(): (k, tuple(v)) for k, v in (places or {}).items()})


def _spans(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(0), m.start(), m.end()) for m in _WORD.finditer(text)]


def _name_topics(question: str, vocab: Vocabulary) -> list[CatalogTopic]:
    """Taxon and place names of the catalog in `question`, longest first, each word used once (a plural of the
    last word counts: "Cobalt Pondhoppers")."""
    words = _spans(question)
    out: list[CatalogTopic] = []
    i = 0
    while i < len(words):
        for n in range(min(MAX_NAME_WORDS, len(words) - i), 0, -1):
            said = question[words[i][1]:words[i + n - 1][2]]
            key = " ".join(w for w, _, _ in words[i:i + n]).lower()
            keys = [key] + ([key[:-1]] if key.endswith("s") and len(key) > 3 else [])
            hit = next((k for k in keys if k in vocab.names or k in vocab.places), None)
            if hit is None or (n == 1 and hit in FRAME):
                continue
            if hit in vocab.names:
                out.append(CatalogTopic("taxon", (hit,), (said,)))
            else:
                out.append(CatalogTopic("place", (vocab.places[hit][1],), (said,)))
            i += n
            break
        else:
            i += 1
    return out


def generic_topics(question: str, vocab: Vocabulary) -> tuple[CatalogTopic, ...]:
    """What `question` names in the catalog's vocabulary: taxa, named places and boxes, dates, months, years and
    licences."""
    out = _name_topics(question, vocab)
    dates = list(_DATE.finditer(question))
    for m in dates:
        try:
            out.append(CatalogTopic("date", (date(int(m.group(1)), int(m.group(2)), int(m.group(3))),), (m.group(0),)))
        except ValueError:
            continue
    for m in _BOX.finditer(question):
        w, south, e, n = (float(x) for x in m.group(0).split(","))
        if -180 <= w <= 180 and -180 <= e <= 180 and -90 <= south <= n <= 90:
            out.append(CatalogTopic("place", ((w, south, e, n),), (m.group(0),)))
    rest = _BOX.sub(" ", _DATE.sub(" ", question))
    for t in out:  # a name already read is no month or year ("May beetle")
        for said in t.said:
            rest = rest.replace(said, " ")
    for word, _, _ in _spans(rest):
        if word in MONTHS:  # capitalised only: "may" is a verb
            out.append(CatalogTopic("month", (MONTHS[word],), (word,)))
    for m in _YEAR.finditer(rest):
        out.append(CatalogTopic("year", (int(m.group(1)),), (m.group(0),)))
    for m in _LICENCE.finditer(question):
        text = m.group(0)
        out.append(CatalogTopic("license", ("public-domain" if "domain" in text.lower() else text,), (text,)))
    return tuple(out)


def asks_only(question: str, topics: Sequence[CatalogTopic], allowed: Iterable[str] = ()) -> bool:
    """True when nothing is left of `question` once the topics' words, the frame words and `allowed` (words
    for the kind of organism named, such as 'bird') are taken out."""
    text = question
    for t in topics:
        for said in t.said:
            text = re.sub(re.escape(said), " ", text, flags=re.IGNORECASE)
    extra = {w.lower() for w in allowed}
    left = [w.lower() for w, _, _ in _spans(text)]
    return all(w in FRAME or w in extra or w.rstrip("s") in extra for w in left)


def question_topics(question: str, vocab: Vocabulary, book: RuleBook = GENERIC) -> tuple[CatalogTopic, ...]:
    """The catalog topics of a question that asks nothing else; () when it asks something the catalog does not
    record. The world's rule book reads it first; the catalog's vocabulary when the book cannot."""
    topics = book.catalog_topics(question)
    if topics is None:
        topics = generic_topics(question, vocab)
    if not topics or not all(t.said for t in topics):
        return ()
    return tuple(topics) if asks_only(question, topics, book.organism_kinds(question)) else ()


@dataclass(frozen=True)
class Verdict:
    """What the catalog says to one question about one photo: "yes", "no" or "missing" (the photo lacks a field
    the question needs: `reason` names it)."""

    outcome: str
    reason: str
    fields: tuple[str, ...] = ()


def _synonyms(photos: Iterable[Photo]) -> dict[str, set[str]]:
    """Common name <-> scientific name (lower case) as the photos that record both pair them."""
    out: dict[str, set[str]] = {}
    for p in photos:
        if p is not None and p.common_name and p.scientific_name:
            c, s = p.common_name.lower(), p.scientific_name.lower()
            out.setdefault(c, set()).add(s)
            out.setdefault(s, set()).add(c)
    return out


def _species_text(p: Photo) -> str:
    return f"{p.scientific_name} ({p.common_name})" if p.common_name else p.scientific_name


def _coarse(p: Photo, species: str) -> Verdict:
    """A species asked of a photo identified only to a genus or higher: no when its genus differs from the
    species' genus, else the catalog cannot tell."""
    genus = (p.genus or "").lower()
    if genus and species and genus != species.split()[0]:
        return Verdict("no", f"catalog: genus = {p.genus}")
    return Verdict("missing", f"the catalog records no species (only {p.scientific_name})", ("species",))


def _taxon_one(p: Photo, name: str, rank: str | None, synonyms: dict[str, set[str]]) -> Verdict:
    name = name.lower()
    if rank is None:  # a name the catalog does not use: a binomial is a species, else any recorded name may match
        rank = "species" if len(name.split()) == 2 else None
    if rank is None:
        if name in p.taxon_names():
            return Verdict("yes", f"catalog: taxon = {name}")
        return Verdict("missing", "the catalog records no rank for this name", ("taxon",))
    attr = RANK_FIELD.get(rank, "scientific_name")
    value = getattr(p, attr) or ""
    if attr == "genus" and not value and len(p.scientific_name.split()) >= 2:
        value = p.scientific_name.split()[0]
    label = FIELD_LABEL.get(attr, attr)
    coarse = len(p.scientific_name.split()) == 1  # identified only to a genus or a higher rank
    if coarse and attr in ("scientific_name", "common_name") and p.scientific_name.lower() != name:
        return _coarse(p, name if attr == "scientific_name" else next(iter(sorted(synonyms.get(name, ()))), ""))
    if value:
        same = value.lower() == name or (attr == "scientific_name" and value.lower().startswith(name + " "))
        shown = _species_text(p) if attr in ("scientific_name", "common_name") else value
        return Verdict("yes" if same else "no", f"catalog: {'species' if attr == 'common_name' else label} = {shown}")
    other = "scientific_name" if attr == "common_name" else ("common_name" if attr == "scientific_name" else "")
    known = getattr(p, other).lower() if other and getattr(p, other) else ""
    if known and name in synonyms:  # the photo records the other name of the species
        return Verdict("yes" if known in synonyms[name] else "no", f"catalog: species = {_species_text(p)}")
    lacking = "species" if attr in ("scientific_name", "common_name") else label
    return Verdict("missing", f"the catalog records no {lacking}", (lacking,))


def _combine(verdicts: Sequence[Verdict]) -> Verdict:
    """Any name of several may match: yes if one does, no if every one does not, missing otherwise."""
    yes = [v for v in verdicts if v.outcome == "yes"]
    if yes:
        return yes[0]
    missing = [v for v in verdicts if v.outcome == "missing"]
    if missing:
        return Verdict("missing", missing[0].reason, tuple(dict.fromkeys(f for v in missing for f in v.fields)))
    return Verdict("no", verdicts[0].reason)


def check(photo: Photo, topic: CatalogTopic, vocab: Vocabulary, synonyms: dict[str, set[str]]) -> Verdict:
    """What the photo's catalog fields say to one topic."""
    if topic.field == "taxon":
        return _combine([_taxon_one(photo, str(n), vocab.names.get(str(n).lower()), synonyms) for n in topic.values])
    if topic.field in ("date", "month", "year"):
        when = photo.observed_on
        if when is None:
            return Verdict("missing", "the catalog records no date", ("date",))
        have = {"date": when, "month": when.month, "year": when.year}[topic.field]
        return Verdict("yes" if have in topic.values else "no", f"catalog: date = {when.isoformat()}")
    if topic.field == "place":
        if photo.latitude is None or photo.longitude is None:
            return Verdict("missing", "the catalog records no place", ("place",))
        inside = any(s <= photo.latitude <= n and (w <= photo.longitude <= e if w <= e else
                                                   (photo.longitude >= w or photo.longitude <= e))
                     for w, s, e, n in topic.values)
        return Verdict("yes" if inside else "no",
                       f"catalog: place = {photo.latitude:.4f}, {photo.longitude:.4f} "
                       f"({'inside' if inside else 'outside'} {topic.said[0]})")
    if topic.field == "license":
        if not photo.license:
            return Verdict("missing", "the catalog records no licence", ("licence",))
        ok = any(matches(parse_licence_filter(str(v)), parse_licence(photo.license)) for v in topic.values) or \
            (parse_licence(photo.license).code in ("cc0", "pdm") and "public-domain" in topic.values)
        return Verdict("yes" if ok else "no", f"catalog: licence = {photo.license}")
    return Verdict("missing", f"the catalog records no {topic.field}", (topic.field,))


def verdict(photo: Photo, topics: Sequence[CatalogTopic], vocab: Vocabulary, synonyms: dict[str, set[str]]) -> Verdict:
    """Every topic of one question at once: no when the catalog contradicts any of them, yes when it confirms all,
    missing (with the fields it lacks) otherwise."""
    found = [check(photo, t, vocab, synonyms) for t in topics]
    no = [v for v in found if v.outcome == "no"]
    if no:
        return Verdict("no", "; ".join(dict.fromkeys(v.reason for v in no)))
    missing = [v for v in found if v.outcome == "missing"]
    if missing:
        fields = tuple(dict.fromkeys(f for v in missing for f in v.fields))
        return Verdict("missing", f"the catalog records no {' or '.join(fields)} for this photo", fields)
    return Verdict("yes", "; ".join(dict.fromkeys(v.reason for v in found)))


class CatalogEvidence:
    """The catalog topics of one search's sub-questions, and what each candidate photo's fields say to them."""

    def __init__(self, questions: Sequence[str], vocab: Vocabulary, photos: Iterable[Photo] = (),
                 book: RuleBook = GENERIC):
        self.questions, self.vocab = list(questions), vocab
        self.topics = [question_topics(q, vocab, book) for q in self.questions]
        self.synonyms = _synonyms(photos)

    def __bool__(self) -> bool:
        return any(self.topics)

    def verdict(self, photo: Photo | None, index: int) -> Verdict | None:
        """The catalog's answer to question `index` for `photo`; None when the question asks something else."""
        topics = self.topics[index] if 0 <= index < len(self.topics) else ()
        if not topics or photo is None:
            return None
        return verdict(photo, topics, self.vocab, self.synonyms)

    def signature(self, photos: Sequence[Photo]) -> list[Any]:
        """What the catalog says for every photo and question (part of the rerank's memo key, so an edited
        catalog is never answered from a stale memo)."""
        return [[p.id, [(v.outcome, v.reason) if v else None for v in (self.verdict(p, i)
                                                                     for i in range(len(self.questions)))]]
                for p in photos]

    def describe(self) -> list[list[dict[str, Any]]]:
        """The topics per question, JSON-ready (for the stage record)."""
        return [[{"field": t.field, "values": [v.isoformat() if isinstance(v, date) else v for v in t.values],
                  "said": list(t.said)} for t in ts] for ts in self.topics]


def plan_evidence(run, questions: Sequence[str], candidate_ids: Sequence[int]) -> tuple[CatalogEvidence | None, list]:
    """The catalog evidence for this search (None when settings.catalog_evidence is off or no question asks what
    the catalog records) and the candidates' photos when they had to be read for it."""
    if not run.settings.catalog_evidence:
        return None, []
    vocab = Vocabulary.of(run.corpus.taxon_names(), run.settings.place_boxes())
    probe = CatalogEvidence(questions, vocab, book=run.book)
    if not probe:
        return None, []
    photos = run.photos(list(candidate_ids))
    return CatalogEvidence(questions, vocab, photos, run.book), photos


def summary(evidence: CatalogEvidence | None, results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """How many photos had a question answered from the catalog, and how many were sent to the picture for a
    field they lack (for the stage record and the notice)."""
    if evidence is None:
        return {"from_catalog": 0, "from_picture": 0, "fields": []}
    answers = [a for r in results for a in r.get("answers") or []]
    fields = sorted({t.field for ts in evidence.topics for t in ts})

    def photos_with(source: str) -> int:
        return sum(1 for r in results if any(a.get("source") == source for a in r.get("answers") or []))

    return {"from_catalog": photos_with("catalog"), "from_picture": photos_with("picture"),
            "answers_from_catalog": sum(1 for a in answers if a.get("source") == "catalog"),
            "fields": fields}


def notice_text(counts: dict[str, Any], total: int) -> str:
    """One line for the user: how many photos the catalog answered and how many were checked from the picture."""
    words = {"taxon": "species or taxon", "month": "date", "year": "date", "license": "licence"}
    what = ", ".join(dict.fromkeys(words.get(f, f) for f in counts["fields"])) or "catalog fields"
    text = f"catalog facts: {counts['from_catalog']} of {total} checked photos were answered from the catalog ({what})"
    if counts["from_picture"]:
        text += f"; {counts['from_picture']} without that in the catalog were checked from the picture"
    return text
