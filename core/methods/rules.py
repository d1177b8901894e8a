"""The deterministic rules behind every LLM task (used offline and whenever the LLM is unusable).

Requests in the vocabulary of the rule book handed in (`book`: a core.contracts.world.RuleBook, e.g. the field-guide
plug-in's, carried by the search's run) get that world's own wording. Any other text
(a user's real collection) gets plain generic sentences: whole phrases of the user's words, quoted where a rule
cannot parse them, never words stitched together from different places; where a rule cannot break a query
down it says so."""
from __future__ import annotations

import re
from collections import Counter

from core.contracts.world import GENERIC, RuleBook, answer_word
from core.methods.decompose import MODIFIERS, SubQuery, core_concept, rule_decompose, tokens
from core.methods.instruction import Instruction

COLOURS = frozenset("red orange yellow green blue purple violet pink white black brown grey gray golden silver "
                    "rusty tan buff olive cream crimson scarlet".split())
_FEATURE = re.compile(
    r"^(?:what|which|how)\s+(?:(?:is|are)\s+the\s+)?(?:colou?rs?|shapes?|patterns?|markings?|sizes?|lengths?|"
    r"many|number|kind|type)\b(?:\s+of)?\s*(?:(?:is|are|does|do|did|has|have)\s+)?", re.IGNORECASE)
_WH = re.compile(r"^(?:what|which|how|does|do|did|is|are|can|has|have)\b", re.IGNORECASE)
_YES_NO = re.compile(r"^(?:does|do|did|is|are|can|has|have)\b", re.IGNORECASE)
_FRAME_WORDS = frozenset(
    "what which how who does do did is are was were has have had one the a an of difference differences between "
    "compare comparison colour color colours colors shape pattern size length longer shorter larger smaller "
    "bigger darker lighter brighter more less vs versus or and both same differ from that those".split())
_SCENE_TAIL = "the whole organism in clear view, natural posture, in its usual surroundings"
_NP_STOP = frozenset("of with in on at by near under over above beside among inside from to for while that which "
                     "who showing shows show has have having is are was were does do and or but".split())
_NUMBERS = frozenset("two three several many".split())
CANNOT_SPLIT = ("query decomposition: the offline rule could not break this query into parts; it is searched as "
                "one part")


def _clean(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip(" ?.!,")
    return re.sub(r"^(?:the|a|an)\s+", "", text, flags=re.IGNORECASE)


def _a(noun: str) -> str:
    return ("an " if noun[:1].lower() in "aeiou" else "a ") + noun


def comparison_organisms(query: str) -> list[str] | None:
    """The two organisms of a comparison question, or None."""
    q = " ".join(query.split()).rstrip("?. ")
    # "how does the crest of A differ from that of B"
    m = re.search(r"^how\s+(?:do|does)\s+(?:the\s+)?.+\s+of\s+(?:the\s+)?(.+?)\s+differ\s+from\s+"
                  r"(?:that|those)\s+of\s+(?:the\s+)?(.+)$", q, re.IGNORECASE)
    if m and _clean(m.group(1)).lower() != _clean(m.group(2)).lower():
        return [_clean(m.group(1)), _clean(m.group(2))]
    for pattern in (r"\bbetween\s+(?:the\s+)?(.+?)\s+and\s+(?:the\s+)?(.+)$",
                    r"^(?:compare\s+)?(?:the\s+)?(.+?)\s+(?:vs\.?|versus|compared (?:to|with))\s+(?:the\s+)?(.+)$",
                    r",\s*(?:the\s+)?(.+?)\s+or\s+(?:the\s+)?(.+)$",
                    r"^(?:do|does|did)\s+(?:the\s+)?(.+?)\s+and\s+(?:the\s+)?(.+?)\s+(?:both|differ|share|have)\b.*$"):
        m = re.search(pattern, q, re.IGNORECASE)
        if m:
            a, b = _clean(m.group(1)), _clean(m.group(2))
            b = re.split(r"\s+(?:in|on|by|when)\s+(?:their|its|the)\b", b)[0]
            if a and b and a.lower() != b.lower():
                return [a, b]
    return None


def _without_values(text: str) -> str:
    return " ".join(w for w in text.split() if w.lower().strip(",.") not in COLOURS)


def _feature_part(query: str) -> str | None:
    q = " ".join(query.split()).rstrip("?. ")
    m = _FEATURE.match(q)
    if m:
        rest = re.sub(r"\s+(?:have|has|show|display)$", "", q[m.end():], flags=re.IGNORECASE)
        return _clean(_without_values(rest)) or None
    return None


def subject_text(query: str) -> str:
    """The query as a noun phrase: question words and asked-about values removed."""
    q = " ".join(query.split()).rstrip("?. ")
    part = _feature_part(q)
    if part:
        return part
    if _WH.match(q):
        return _clean(_without_values(re.sub(_WH, "", q, count=1))) or q
    return q


# nouns that end like a verb's -ing form
_ING_NOUNS = frozenset("duckling gosling nestling fledgling hatchling starling seedling sapling yearling wing "
                       "underwing forewing hindwing king spring string ring sibling".split())


def is_ing_verb(word: str) -> bool:
    """True for a lower-case '-ing' verb ('feeding'); names ('Tuftling') and -ing nouns ('nestling') are not."""
    return word.islower() and word.endswith("ing") and word not in _ING_NOUNS


def head_phrase(text: str) -> tuple[list[str], str]:
    """(leading adjectives, head noun phrase) of `text`: the words up to the first preposition, verb or -ing
    word ('albino American robin' -> (['albino'], 'American robin'); 'a nest showing ...' -> ([], 'nest'))."""
    words = re.findall(r"[A-Za-z0-9'-]+", _clean(text))
    while words and words[0].lower() in ("a", "an", "the", "some", "photo", "photos", "of", "picture"):
        words = words[1:]
    adjectives = []
    while words and words[0].lower() in MODIFIERS:
        adjectives.append(words.pop(0))
    head = []
    for w in words:
        if w.lower() in _NP_STOP or (is_ing_verb(w) and head):
            break
        head.append(w)
    return adjectives, " ".join(head)


def instruction(query: str, book: RuleBook = GENERIC):
    """World requests: the world's own picture description. Otherwise: feature questions give organism + part
    (value left out); comparisons one description per organism; anything else the query plus a short note on
    appearance and posture (well under 30 words)."""
    found = book.instruction(query)
    if found is not None:
        return found
    q = " ".join(query.split())
    pair = comparison_organisms(q)
    if pair:
        head = re.split(r",|\bbetween\b", q)[0]
        names = {w.lower() for w in re.findall(r"[A-Za-z'-]+", " ".join(pair))}
        part_words = [w for w in re.findall(r"[A-Za-z'-]+", head) if w.lower() not in names
                      and w.lower() not in _FRAME_WORDS and w.lower() not in COLOURS]
        tail = f", {' '.join(part_words)} clearly visible" if part_words else ", whole body in clear side view"
        return Instruction("comparison", [f"{_a(org)}{tail}" for org in pair], pair, "rule")
    part = _feature_part(q)
    if part:
        return Instruction("feature", [f"{part}, shown from an angle where this part is clearly visible"], [], "rule")
    if _WH.match(q):  # a yes/no or wh- question about a feature: drop the question words and the values
        body = _clean(_without_values(re.sub(_WH, "", q, count=1)))
        body = re.sub(r"\s+(?:have|has)\s+", " showing its ", body)
        return Instruction("feature", [f"{_a(body)}, clearly visible"], [], "rule")
    return Instruction("scene", [f"{q.rstrip('.')}, {_SCENE_TAIL}"], [], "rule")


def context(query: str, book: RuleBook = GENERIC) -> str:
    found = book.context(query)
    if found is not None:
        return found
    q = " ".join(query.split()).rstrip("?.!")
    return (f"No field notes are at hand for this request. A matching photo shows what it asks for clearly: "
            f"\"{q}\". (Written by an offline rule, not by an expert model.)")


def subquestions(query: str, n: int, book: RuleBook = GENERIC) -> list[str]:
    """Two or three yes/no questions: the world's wording for world requests, else plain generic ones."""
    found = book.subquestions(query, n)
    if found is not None:
        return found[:n]
    q = " ".join(query.split()).rstrip("?.! ")
    pair = comparison_organisms(q)
    part = _feature_part(q)
    if pair:
        qs = [f"Is this {_a(pair[0])} or {_a(pair[1])}?"]
        words = [w for w in re.findall(r"[A-Za-z'-]+", re.split(r",|\bbetween\b", q)[0])
                 if w.lower() not in _FRAME_WORDS and w.lower() not in COLOURS
                 and w.lower() not in " ".join(pair).lower().split()]
        qs.append(f"Is the {' '.join(words)} clearly visible?" if words else "Is the whole organism clearly visible?")
        return qs[:n]
    if part:
        who = re.search(r"\bof\s+(?:the\s+|an?\s+)?(.+?)(?:'s\b.*)?$", part)
        qs = [f"Is there {_a(_clean(who.group(1)))} in the photo?"] if who else []
        verb = "Are" if part.split()[0].lower().endswith("s") else "Is"
        qs.append(f"{verb} the {part} clearly visible?")
        if len(qs) < 2:
            qs.append(f'Does the photo match the description "{q}"?')
        return qs[:n]
    asked = re.sub(r"^\s*there\s+", "", re.sub(_YES_NO, "", q, count=1)) if _YES_NO.match(q) else q
    said, paired = count_phrases(asked)
    adjectives, head = head_phrase(said)
    number = next((a for a in adjectives if a.lower() in _NUMBERS), paired)
    adjectives = [a for a in adjectives if a.lower() not in _NUMBERS]
    many = bool(number) or (bool(head) and is_plural(head.split()[-1]))
    if head and number:
        qs = [f"Are there {number.lower()} {head} in the photo?"]
    elif head and many:  # "frogs on a log" -> "Are there frogs in the photo?"
        qs = [f"Are there {head} in the photo?"]
    else:
        qs = [f"Is there {_a(head)} in the photo?"] if head else []
    qs += [f"{'Are' if many else 'Is'} the {head} {adj.lower()}?" for adj in adjectives if head]
    rest = _after_head(said, head)
    if rest:  # "a heron eating a fish" -> "Is the heron eating a fish?"
        qs.append(f"{'Are' if many else 'Is'} the {head} {rest}?")
    if _YES_NO.match(q):
        qs.append(q[0].upper() + q[1:] + "?")
    elif len(tokens(q)) > len(tokens(" ".join(adjectives + [number or "", head]))) or len(qs) < 2:
        qs.append(f'Does the photo match the description "{q}"?')
    return list(dict.fromkeys(qs))[:n]


# nouns that end in -s in the singular
_SINGULAR_S = frozenset("species series lens canvas gas news bus iris ibis cactus octopus platypus hippopotamus "
                        "walrus mantis asparagus crocus hibiscus narcissus lotus albatross moss grass".split())
_IRREGULAR = {"butterflies": "butterfly", "dragonflies": "dragonfly", "damselflies": "damselfly", "fungi": "fungus",
              "larvae": "larva", "geese": "goose", "mice": "mouse", "children": "child", "leaves": "leaf",
              "wolves": "wolf", "calves": "calf", "halves": "half"}
_PAIRED = re.compile(r"^(?:(?:a|one)\s+)?(?:pair|couple)\s+of\s+", re.IGNORECASE)
_TOGETHER = re.compile(r"\s+(?:side\s+by\s+side|together)\b", re.IGNORECASE)


def singular(word: str) -> str:
    """A plain English singular of a plural noun ('frogs' -> 'frog', 'butterflies' -> 'butterfly', 'foxes' ->
    'fox'); any other word as it is, lower case."""
    w = word.lower()
    if w in _IRREGULAR:
        return _IRREGULAR[w]
    if w in _SINGULAR_S or len(w) <= 3 or w.endswith(("ss", "us", "is")):
        return w
    if w.endswith("ies"):
        return w[:-3] + "y"
    if w.endswith(("ches", "shes", "xes", "sses", "zes")):
        return w[:-2]
    return w[:-1] if w.endswith("s") else w


def is_plural(word: str) -> bool:
    """True for an English noun in the plural ('herons', 'foxes', 'larvae'); 'moss', 'species', 'ibis' are not."""
    return singular(word) != word.lower()


def count_phrases(text: str) -> tuple[str, str | None]:
    """`text` without the words that say how many, and the number they say: 'a pair of mallards swimming' ->
    ('mallards swimming', 'two'); 'two herons side by side on sand' -> ('two herons on sand', None) (the
    number stays in the text)."""
    paired = _PAIRED.match(text)
    number = "two" if paired else None
    text = text[paired.end():] if paired else text
    return _TOGETHER.sub("", text), number


def _after_head(query: str, head: str) -> str:
    """What follows the head noun when it is an -ing phrase or a place ('eating a fish', 'in snow'), else ''."""
    found = re.search(rf"\b{re.escape(head)}\b\s+(.+)$", query, flags=re.IGNORECASE) if head else None
    if not found:
        return ""
    rest = " ".join(found.group(1).split())
    first = rest.split()[0].lower()
    if first.endswith("ing") or first in ("in", "on", "at", "near", "under", "among", "beside"):
        return rest
    return ""


def decomposition(query: str, limit: int, book: RuleBook = GENERIC) -> tuple[list[SubQuery], bool]:
    """(sub-queries, whether the rule managed to split). World requests: each organism with one attribute per
    part. Other text: split at conjunctions and prepositions into whole phrases; one part means it could not."""
    found = book.decomposition(query, limit)
    if found is not None:
        return found, True
    q = " ".join(query.split()).rstrip("?.! ")
    pair = comparison_organisms(q)
    if pair:
        return [SubQuery(o, core_concept(o)) for o in pair][:limit], True
    text = _feature_part(q) or q
    if _YES_NO.match(q):  # "Does the newt have orange spots" -> "the newt with orange spots"
        text = re.sub(r"\b(?:have|has)\b", "with", re.sub(_YES_NO, "", q, count=1))
    said, paired = count_phrases(text)  # "a pair of mallards swimming" -> "two mallards swimming"
    text = f"{paired} {said}" if paired else said
    parts = rule_decompose(text, limit)
    return parts, len(parts) > 1


# ---- PlugIR -----------------------------------------------------------------------------------------------
def _statement(question: str) -> str:
    q = question.strip().rstrip("?")
    q = re.sub(r"^(?:is|are|does|do|did|can|has|have)\s+(?:there\s+)?(?:the\s+photo\s+show\s+)?", "", q,
               flags=re.IGNORECASE)
    return re.sub(r"^the subject\s+", "", q.strip(), flags=re.IGNORECASE)


def reformulate(description: str, turns, book: RuleBook = GENERIC) -> str:
    """The description plus what each 'yes' confirmed (the question's content, in the world's words where it is
    a world question) and free text as given. 'No' and 'not sure' add nothing here (the dialogue turns a 'no'
    into a negative constraint), and neither does the reason after 'yes:' (it would grow the description by
    whole notes)."""
    found = book.reformulate(description, turns)
    if found is not None:
        return found
    bits = [" ".join(description.split()).rstrip(".")]
    for q, a in turns:
        word = answer_word(a)
        if word == "yes":
            bits.append(_statement(q))
        elif word == "text":
            bits.append(" ".join(a.split()).rstrip("."))
    return ", ".join(dict.fromkeys(b for b in bits if b))


_NOT_ATTRIBUTES = ("note", "photo of", "taken on", "near", "observer", "visible", "read from")


def _phrase_question(phrase: str) -> str:
    """A yes/no question about a caption phrase that reads naturally: 'Is it perched on a branch?', 'Are its
    wings blue?', 'Does the photo show a nest with eggs?'."""
    words = phrase.split()
    if re.match(r"^(?:seen|shown|viewed|photographed|perched|sitting|resting|flying|feeding|carrying|"
                r"swimming|crawling|climbing|standing)\b", phrase) or words[0].endswith("ing"):
        return f"Is it {phrase}?"
    if len(words) == 2 and words[0] in MODIFIERS:
        return f"{'Are' if words[1].endswith('s') else 'Is'} its {words[1]} {words[0]}?"
    if len(words) == 2 and words[1].endswith("ed"):  # "wings folded"
        return f"{'Are' if words[0].endswith('s') else 'Is'} its {words[0]} {words[1]}?"
    if re.match(r"^(?:a|an|the|some|two|three|one|\d+)\b", phrase):
        return f"Does the photo show {phrase}?"
    return f"Does the photo show {_a(phrase)}?"


def questions(caption: str, turns, candidates: list[str], n: int, book: RuleBook = GENERIC) -> list[str]:
    """Questions that split the candidates best and that the caption and dialogue do not settle: about the
    world's attributes when the candidates' notes are in its terms, else about caption phrases."""
    found = book.questions(caption, turns, candidates, n)
    if found:
        return found[:n]
    known = set(tokens(caption + " " + " ".join(q + " " + a for q, a in turns)))
    counts: Counter[str] = Counter()
    for cap in candidates:
        phrases = {" ".join(p.split()).lower() for p in re.split(r"[,.;:()]", cap)}
        counts.update(p for p in phrases if 1 <= len(p.split()) <= 5 and not re.search(r"\d", p)
                      and not p.startswith(_NOT_ATTRIBUTES) and any(t not in known for t in tokens(p)))
    half = len(candidates) / 2.0
    ranked = sorted(counts, key=lambda p: (abs(counts[p] - half), -counts[p], p))
    out = [_phrase_question(p) for p in ranked[:n]]
    fallback = ["Is it seen from the side?", "Is more than one organism visible?", "Is it flying?",
                "Is it in water?", "Is it on the ground?"]
    return (out + [q for q in fallback if q not in out])[:n]


def filter_answers(caption: str, turns, questions_: list[str], book: RuleBook = GENERIC) -> list[str]:
    """Per question what the caption and dialogue alone say ('uncertain' when they cannot answer it):
    world questions by their facts, other questions by whether their content words are all known."""
    found = book.filter_answers(caption, turns, questions_) or [None] * len(questions_)
    known = set(tokens(caption + " " + " ".join(q + " " + a for q, a in turns)))
    asked = {q.strip().lower() for q, _ in turns}
    out = []
    for q, said in zip(questions_, found):
        if said is not None:
            out.append(said)
        elif q.strip().lower() in asked:
            out.append("asked before")
        elif any(t not in known and t not in MODIFIERS for t in tokens(_statement(q))):
            out.append("uncertain")
        else:
            out.append("yes")
    return out


def uncertain_questions(caption: str, turns, questions_: list[str], book: RuleBook = GENERIC) -> list[str]:
    """The questions the caption and dialogue cannot answer."""
    return [q for q, a in zip(questions_, filter_answers(caption, turns, questions_, book)) if a == "uncertain"]


def answer(question: str, notes: list[tuple[int, str]], book: RuleBook = GENERIC) -> dict:
    """An unverified answer: read from the photos' notes for a world colour question, else a plain statement
    that no answer can be written and why, citing the best-matching photos."""
    found = book.answer(question, notes)
    return found if found is not None else unverified_answer(notes)


def unverified_answer(notes: list[tuple[int, str]]) -> dict:
    ids = [pid for pid, _ in notes]
    if not ids:
        text = ("No answer can be written: no photo matched, so there is nothing to answer from (offline rule, no "
                "language model).")
    else:
        cites = ", ".join(f"[{i}]" for i in ids[:5])
        text = ("No answer can be written from the photos: the offline rule (no language model) reads nothing in "
                f"them, so it states nothing about them. The best-matching photos are {cites}; each one's note is "
                "shown with it.")
    return {"text": text, "cited_ids": ids[:5], "verified": False}
