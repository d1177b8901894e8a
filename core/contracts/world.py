"""What the generic search path asks of a world: a domain with a vocabulary of its own (the synthetic field
guide is one), plugged in by name like the backends.

A world brings a `RuleBook` (how to word sub-questions, picture descriptions, decompositions, dialogue
questions and answers for requests in its vocabulary, and the facts its captions state), the names of its
backends, a demo builder and a benchmark. Every rule-book method answers None (or an empty set) for text
outside the world; the generic rules then use their own plain wording. The base class below is the generic
book: it knows no world at all.

Core never imports a world. The composition root registers the worlds it knows (core.plugins.registry, one
call per plug-in) and decides, per search, which rule books read it (`RuleBooks`, handed to the search engine
and carried by each search's run): the request's text is read by one book, each photo by the book of its
source. With no world chosen every request goes through the generic rules. This module holds shapes only."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

Turns = Sequence[tuple[str, str]]
Progress = Callable[[int, int], None]

YES = frozenset({"yes", "y", "yeah", "yep", "correct", "true"})
NO = frozenset({"no", "n", "nope", "false"})
UNSURE = frozenset({"not sure", "unsure", "don't know", "dont know", "no idea", "maybe", "unknown", "?", ""})
_FRAME = frozenset("what which how who is are does do did can has have having there this these those that them "
                   "something photo photos image images picture pictures the a an of in on at it its".split())


def answer_word(answer: str) -> str:
    """yes / no / unsure / text for a user's reply ('yes: the wings are red' is yes)."""
    a_norm = " ".join((answer or "").lower().split()).strip(" .!")
    head = re.split(r"[:,;-]", a_norm, maxsplit=1)[0].strip()
    if a_norm in UNSURE:
        return "unsure"
    if head in YES:
        return "yes"
    if head in NO:
        return "no"
    return "text"


@dataclass(frozen=True)
class CatalogTopic:
    """One thing a yes/no question asks that a catalog field may record (core/methods/catalog_evidence.py).

    field: "taxon" (values: names at any rank or common names, any of them), "date" (datetime.date values),
    "month" (1-12), "year", "place" (a (west, south, east, north) box) or "license" (licence filter texts, as
    core.licences reads them). `said`: the words of the question that name it ("Ember-crested Tuftling")."""

    field: str
    values: tuple[Any, ...]
    said: tuple[str, ...] = ()


def content_key(text: str) -> frozenset[str]:
    """A wording-independent key for a question outside any world's vocabulary: its content words, lower
    case, simple plural stripped."""
    words = re.findall(r"[a-z0-9]+(?:[-'][a-z0-9]+)*", (text or "").lower())
    stripped = {w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words}
    return frozenset(w for w in stripped if w not in _FRAME)


class RuleBook:
    """The generic rule book: it reads no request (every wording method answers None) and finds no facts.
    A world subclasses it and answers for the text in its own vocabulary."""

    name = "generic"

    # ---- wording: None means "not in this world's terms", and the generic rules answer instead
    def subquestions(self, query: str, n: int) -> list[str] | None:
        return None

    def decomposition(self, query: str, limit: int) -> list[Any] | None:
        return None

    def instruction(self, query: str) -> Any | None:
        return None

    def context(self, query: str) -> str | None:
        return None

    def questions(self, caption: str, turns: Turns, candidates: list[str], n: int) -> list[str] | None:
        return None

    def filter_answers(self, caption: str, turns: Turns, questions: list[str]) -> list[str | None] | None:
        return None

    def reformulate(self, description: str, turns: Turns) -> str | None:
        return None

    def answer(self, question: str, notes: list[tuple[int, str]]) -> dict | None:
        return None

    # ---- facts: normalised strings ("species=...", "colour:crest=red") that serve as meanings
    def text_facts(self, text: str, defaults: bool = True) -> set[str]:
        return set()

    def question_facts(self, question: str) -> frozenset[str]:
        return frozenset()

    def understood(self, text: str) -> bool:
        """True when every word of `text` is in the world's vocabulary (and it names something)."""
        return False

    def content_key(self, text: str) -> frozenset[str]:
        return content_key(text)

    # ---- the dialogue's bookkeeping over candidate facts
    def consistent(self, caption: str, turns: Turns, per: list[set[str]]) -> list[set[str]]:
        return per

    def denied_facts(self, turns: Turns) -> set[str]:
        return set()

    def settled_by_denials(self, fact: str, denied: set[str], candidate_facts: list[set[str]]) -> bool:
        return False

    def uncovered(self, query: str, questions: list[str]) -> list[str]:
        """The parts of `query` (in plain words) that none of `questions` asks about, where the world's
        vocabulary can tell; the generic book cannot tell and names none."""
        return []

    def impossible(self, question: str, caption: str, turns: Turns) -> str | None:
        """Why a dialogue question cannot apply to what the description and the yes answers name (or is settled
        by the name), in plain words ('frogs have no wings'), from the world's data on what each kind of
        organism can have; None when it can, or the book cannot tell (the generic book never can)."""
        return None

    def meaning_key(self, question: str, caption: str, turns: Turns) -> str | None:
        """What a dialogue question asks about what is named, as a key two questions with the same meaning
        share ("Is it alone?" and "Are there two of them?"); None outside the world's terms."""
        return None

    def organism_kinds(self, text: str) -> set[str]:
        """Words that name the kind of each organism `text` names in the world's terms ('bird', 'chick')."""
        return set()

    def group_taxa(self, text: str) -> tuple[str, tuple[str, ...]] | None:
        """(the group word as `text` writes it, the taxa of the world's taxonomy it names, tried in order) when
        the subject of `text` is one of the world's groups ('frogs on sand' -> ('frogs', (<the frogs' class>,
        ...))); None when it is not in the world's terms, and the generic English group nouns are tried."""
        return None

    def catalog_topics(self, question: str) -> tuple[CatalogTopic, ...] | None:
        """What `question` asks that a catalog records, as the world reads it: e.g. a species of the world (by its
        scientific name). None: the book cannot read the question (the generic reading decides); (): it asks
        about something no catalog field records."""
        return None


GENERIC = RuleBook()  # stateless: it answers "not mine" to everything


@dataclass(frozen=True)
class DemoCard:
    """A world's camera-trap demo as it would come off the traps: the card's folder (a folder per deployment),
    the detector's results (MegaDetector 1.x format) and the deployments CSV (Camtrap DP's deployment columns
    plus clock_offset_s) that an ingest of the folder takes."""

    folder: str
    detections: str | None = None
    deployments: str | None = None
    frames: int = 0


@dataclass
class World:
    """A plug-in (a world, or a set of backends alone), registered in one call (core.plugins.registry.register):
    its rule book, its backends, its photo reader, where its demo photos go and how they are drawn, and its
    benchmark."""

    name: str
    rule_book: RuleBook = GENERIC
    title: str = ""  # how sentences name it ("field-guide")
    # backend kind ("embedder", "judge", "generator", "captioner") -> {name: "module:factory"}
    backends: dict[str, dict[str, str]] = field(default_factory=dict)
    runs_model: bool = True  # its backends run a model in the process (with workers on, in a worker process)
    judge_reads_embedder: bool = False  # its judges are built on the embedder (they get it as a third argument)
    # build_demo(folder, seed, progress) -> the CSV the ingest reads; None: the world has no demo collection
    build_demo: Callable[..., Any] | None = None
    demo_folder: str = ""  # under data_dir
    # its photo reader ("module:factory", named like the world): the answer reader 'auto' picks it when this
    # world's judge and encoder are in use on its collection
    reader: str = ""
    # its benchmark for `eval --benchmark NAME` (named like the world): load(data, limit) -> evaluation items,
    # the metrics it reports, and whether it is run on the world's own catalog
    benchmark: Callable[..., Any] | None = None
    benchmark_metrics: tuple[str, ...] = ()
    benchmark_own_catalog: bool = False
    # recognises(catalog, demo_folder) -> True when the catalog holds nothing but this world's photos, wherever
    # they lie (None: only photos inside demo_folder count as the world's)
    recognises: Callable[[Any, str], bool] | None = None
    # build_card(folder, seed, progress) -> DemoCard: the camera-trap side drawn inside demo_folder after the demo
    # (None: the world has none)
    build_card: Callable[..., Any] | None = None
    source: str = ""  # the Photo.source of the world's photos ('' : the world's name)

    @property
    def photo_source(self) -> str:
        return self.source or self.name


@dataclass(frozen=True)
class RuleBooks:
    """The rule books one search reads, chosen by the composition root and carried by the search's run:
    `request` reads the request's text (and the dialogue's), a photo is read by the book of its source
    (`sources`: Photo.source -> book), any other photo by `default`. A collection that is all one world's
    reads everything with that world's book; a mixed one reads the world's photos with the world's book and
    the rest, and the request, with the generic rules."""

    request: RuleBook = GENERIC
    default: RuleBook = GENERIC
    sources: tuple[tuple[str, RuleBook], ...] = ()

    @classmethod
    def whole(cls, world: World) -> "RuleBooks":
        """The collection is nothing but `world`'s photos."""
        book = world.rule_book
        return cls(book, book, ((world.photo_source, book),))

    @classmethod
    def mixed(cls, world: World) -> "RuleBooks":
        """The collection holds `world`'s photos among others: only its photos are read in its terms."""
        return cls(GENERIC, GENERIC, ((world.photo_source, world.rule_book),))

    def for_photo(self, photo: Any) -> RuleBook:
        """The book that reads `photo` (by its source)."""
        source = getattr(photo, "source", "") or ""
        return next((book for name, book in self.sources if name == source), self.default)
