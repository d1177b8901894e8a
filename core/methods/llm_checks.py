"""What an LLM's answer must mean to be used, checked by words (the JSON shape is checked in llm_schemas.py).

A real but small model (SmolLM2-135M) often answers in perfect JSON about the wrong thing: a picture
description without the organism, a reformulated caption that lost its subject, a decomposition with parts
the user never asked for, an answer citing photos it was not shown. Each check here raises Unusable with
the reason, and the task falls back to its rule (llm_call.ask adds the notice). Words are compared as the
decomposition compares them (lower case, simple plurals stripped, a compound counts for its head word)."""
from __future__ import annotations

import logging
import re

from core.contracts.search_request import QUESTION_START, is_question
from core.contracts.world import GENERIC, RuleBook
from core.methods import rules
from core.methods.decompose import rule_decompose, token_set, tokens
from core.methods.llm_schemas import YES_NO_OPENERS

log = logging.getLogger(__name__)


class Unusable(ValueError):
    """An answer of the right shape whose meaning does not fit the request."""


def _has(word: str, have: set[str]) -> bool:
    return word in have or (len(word) >= 4 and any(h.endswith(word) for h in have))


def subject_words(text: str) -> list[str]:
    """The content words of the request's main subject (the core of its first part; for a comparison, the two
    organisms' names)."""
    pair = rules.comparison_organisms(text)
    if pair:
        return [w for name in pair for w in tokens(name)]
    subject = rules.subject_text(text) or text
    parts = rule_decompose(subject)
    words = _name_words(parts[0].text) if parts else []
    owner = re.search(r"\bof\s+(.+)$", subject)  # "the crest of the Gold-crested Tuftling": the organism counts
    if words and owner:
        words += [w for w in tokens(owner.group(1)) if w not in words]
    return words or tokens(text)


def _name_words(part: str) -> list[str]:
    """The words that name a part's thing: those before its first lower-case '-ing' verb ("Tawny Sailwing
    caterpillar feeding" names a Tawny Sailwing caterpillar, "nest showing brood parasitism" a nest;
    "Scarlet-underwing" stays)."""
    kept = []
    for word in re.findall(r"[A-Za-z0-9]+", part):
        if kept and rules.is_ing_verb(word):
            break
        kept.append(word)
    return tokens(" ".join(kept))


def mentions(text: str, words: list[str]) -> bool:
    """True when `text` contains at least one of `words` (normalised, compounds count for their head)."""
    have = token_set(text)
    return any(_has(w, have) for w in words)


def require_subject(task: str, request: str, answer: str) -> None:
    """The answer names the request's main subject."""
    words = subject_words(request)
    if words and not mentions(answer, words):
        raise Unusable(f"it does not name the request's subject ({' '.join(words)})")


def from_request_words(part: str, request: str) -> bool:
    """Every content word of `part` occurs in the request (the words may be reordered; 'with' may link an
    organism to one of its attributes: "Slate Reedpiper with a black crest")."""
    need = [w for w in tokens(part) if w != "with"]
    have = token_set(request)
    return bool(need) and all(_has(w, have) for w in need)


def check_instruction(query: str, kind: str, descriptions: list[str], organisms: list[str],
                      strict: bool = False, book: RuleBook = GENERIC) -> None:
    """A comparison names each organism in its own description; any other description names the subject.
    `strict` (a model's instruction, not the rule's): each description also passes check_description."""
    if kind == "comparison":
        if len(descriptions) != 2:
            raise Unusable("a comparison needs one description per organism")
        if organisms:
            for name in organisms:
                if not any(mentions(d, tokens(name)) for d in descriptions):
                    raise Unusable(f"no description names {name}")
            if strict:  # each description is about one of the two organisms: the request's words are split
                for d in descriptions:
                    check_description(query, kind, d, whole_request=False, book=book)
            return
    for d in descriptions:
        require_subject("visualization instruction", query, d)
        if strict:
            check_description(query, kind, d, book=book)


def is_yes_no(question: str) -> bool:
    """A question a yes/no judge can answer: it opens with "Is", "Does", ... and ends with "?"."""
    words = question.split()
    return bool(words) and words[0].capitalize() in YES_NO_OPENERS and question.rstrip().endswith("?")


def usable_subquestions(query: str, context: str, questions: list[str],
                        dropped: list[str] | None = None, book: RuleBook = GENERIC) -> list[str]:
    """The model's questions a judge can use, in order: the first must be a yes/no question naming the request's
    subject (else Unusable); each later one must be a yes/no question about something the request or its notes
    name beyond the subject, else it is dropped (logged). No question may name an organism the request does not
    name ("Does the crocodile have a mouth full of fish?" for a frog). Fewer than two usable questions is
    Unusable. `dropped` collects each dropped question with its reason."""
    if not is_yes_no(questions[0]):
        raise Unusable(f"{questions[0]!r} is not a yes/no question")
    require_subject("sub-questions", query, questions[0])
    others = foreign_organisms(query, questions[0], book)
    if others:
        raise Unusable(f"{questions[0]!r} names an organism the request does not ({', '.join(others)})")
    subject = set(subject_words(query))
    words = [w for w in tokens(query) if w not in subject and w not in _FUNCTION_WORDS]
    words += [w for w in tokens(context) if w not in subject and w not in _FUNCTION_WORDS and w not in LINK_WORDS
              and w not in _GENERIC and len(w) >= 3]
    kept = [questions[0]]
    for q in questions[1:]:
        others = foreign_organisms(query, q, book)
        why = ("is not a yes/no question" if not is_yes_no(q) else
               f"names an organism the request does not ({', '.join(others)})" if others else
               "asks about nothing the request needs beyond its subject" if not mentions(q, words) else "")
        if why:
            log.info("sub-questions: dropped %r: it %s", q, why)
            if dropped is not None:
                dropped.append(f"\"{q}\": {why[3:] if why.startswith('is ') else why}")
        else:
            kept.append(q)
    if len(kept) < 2:
        raise Unusable("no question checks anything beyond the subject"
                       + (": " + "; ".join(dropped) if dropped else ""))
    return kept


# words a small model may join the request's own words with (own_words in model_facts)
LINK_WORDS = ("the a an it its this there they their them in on of with by to at from and or photo picture "
              "visible shown seen clearly any one two").split()
_FUNCTION_WORDS = frozenset("at on in by with and or to they them we you he she which what who not but".split())
# words of the (model-written) notes that say nothing about what a photo shows
_GENERIC = frozenset("also can has have had was were will would could should may might often usually generally "
                     "known found specy species like such other more most many much very well".split())


def request_vocabulary(query: str) -> list[str]:
    """The words a small model's questions are held to: the request's words as written and in lower case (a
    possessive "'s" dropped), plus LINK_WORDS."""
    out: list[str] = []
    for word in re.findall(r"[A-Za-z][A-Za-z'-]*", query):
        word = word[:-2] if word.endswith("'s") else word.rstrip("'")
        for form in (word, word.lower()):
            if form not in out:
                out.append(form)
    return out + [w for w in LINK_WORDS if w not in out]


def cited_ids(text: str, given: set[int]) -> tuple[list[int], list[int]]:
    """(ids cited in square brackets that were given, in order of first mention; ids cited that were not).
    '[12, 15]' counts as two citations."""
    found: list[int] = []
    for group in re.findall(r"\[([\d,\s]+)\]", text):
        for raw in re.findall(r"\d+", group):
            if len(raw) <= 18 and int(raw) not in found:
                found.append(int(raw))
    return [i for i in found if i in given], [i for i in found if i not in given]


def keeps_subject(description: str, reformulation: str, book: RuleBook = GENERIC) -> None:
    """A PlugIR reformulation still names what the first description was about; a species of the field-guide
    world counts for the kind of organism it is ('a Slate Reedpiper perched on a branch' for 'a bird on a
    branch', once the user confirmed the species)."""
    kinds = book.organism_kinds(reformulation)
    if kinds & {w[:-1] if w.endswith("s") else w for w in subject_words(description)}:
        return
    require_subject("reformulation", description, reformulation)


# ---- organisms a text names -----------------------------------------------------------------------------------
# Common names of animals, by group, for telling when a model's text is about another organism than the request's
# ("Does the crocodile have a mouth full of fish?" for a frog). Plants are left out: a tree or a leaf is where an
# animal is, rarely a claim about another organism. Words that are also common verbs ('fly', 'seal') are left out.
ORGANISM_GROUPS: dict[str, tuple[str, ...]] = {
    "bird": ("heron egret pipit cowbird warbler sparrow finch owl hawk eagle duck gull robin crow raven wren "
             "thrush woodpecker hummingbird kingfisher swallow parrot pigeon dove chickadee jay starling blackbird "
             "cuckoo penguin goose geese swan stork pelican vulture falcon kestrel buzzard tit nuthatch flamingo "
             "ostrich chicken hen rooster tern plover sandpiper grebe cormorant ibis lark oriole tanager vireo magpie "
             "quail pheasant grouse loon puffin albatross petrel").split(),
    "amphibian": "frog toad newt salamander axolotl".split(),
    "reptile": "crocodile alligator lizard snake turtle tortoise gecko iguana chameleon viper python".split(),
    "fish": "salmon trout shark eel carp pike minnow".split(),
    "insect": ("moth butterfly beetle bee wasp ant dragonfly damselfly grasshopper ladybird ladybug mosquito "
               "cicada hornet termite").split(),
    "arachnid": "spider scorpion".split(),
    "mammal": ("deer fox wolf bear mouse mice rat squirrel rabbit hare otter badger zebra horse cow dog cat lion "
               "tiger elephant monkey whale dolphin giraffe hedgehog beaver moose boar").split(),
}
# the word for a whole group counts as that group ('bird' for a heron query is about the heron's kind)
GROUP_WORDS: dict[str, str] = {"bird": "bird", "amphibian": "amphibian", "reptile": "reptile", "fish": "fish",
                               "insect": "insect", "arachnid": "arachnid", "mammal": "mammal"}
# the young of a group, about the same organism ('tadpole' for a frog)
YOUNG: dict[str, str] = {"tadpole": "amphibian", "caterpillar": "insect", "larva": "insect", "larvae": "insect",
                         "chick": "bird", "nestling": "bird", "fledgling": "bird", "hatchling": "reptile"}
_GROUP_OF: dict[str, str] = {w: g for g, words in ORGANISM_GROUPS.items() for w in words}
_GROUP_OF.update(GROUP_WORDS)
_GROUP_OF.update(YOUNG)


def _group_of(token: str) -> str | None:
    """The group of an organism word; a compound counts for its head ('bullfrog' -> amphibian)."""
    if token in _GROUP_OF:
        return _GROUP_OF[token]
    return next((_GROUP_OF[token[i:]] for i in range(1, len(token) - 3) if token[i:] in _GROUP_OF), None)


def _is_group_word(token: str) -> bool:
    """A word for a whole group or its young: 'bird', 'tadpole', and a compound of a group word that is not a
    listed species ('songbird', 'seabird'; but 'cowbird' is a species)."""
    if token in GROUP_WORDS or token in YOUNG:
        return True
    return token not in _GROUP_OF and any(token[i:] in GROUP_WORDS for i in range(1, len(token) - 3))


def organisms_named(text: str) -> dict[str, str]:
    """{organism word: its group} for each animal `text` names in common words."""
    out: dict[str, str] = {}
    for t in tokens(text):
        group = _group_of(t)
        if group:
            out[t] = group
    return out


def _world_species(text: str, book: RuleBook) -> set[str]:
    return {f for f in book.text_facts(text, defaults=False) if f.startswith("species=")}


def foreign_organisms(request: str, text: str, book: RuleBook = GENERIC) -> list[str]:
    """The organisms `text` names that the request does not: an animal word that is neither in the request nor
    the request's organisms' group (or their young), and a species of the world's field guide the request does
    not name. A group word is allowed when the request's group is unknown ('bird' for 'a wallcreeper')."""
    own = token_set(request)
    kinds = book.organism_kinds(request)  # 'frog' for a request naming the world's Cobalt Pondhopper
    own_groups = set(organisms_named(request).values()) | {g for k in kinds if (g := _group_of(k))}
    out = []
    for word, group in organisms_named(text).items():
        if word in own or _has(word, own) or word in kinds:
            continue
        if _is_group_word(word):  # the request's kind, or its young
            if not own_groups or group in own_groups:
                continue
        out.append(word)
    asked = _world_species(request, book)
    species = _world_species(text, book) - asked
    names = sorted(f.split("=", 1)[1] for f in species)
    if not asked:  # a request for a kind ('a frog on sand') may be answered about the world's species of that kind
        names = [n for n in names if not book.organism_kinds(n) & own]
    out += names
    return out


# ---- expert context -------------------------------------------------------------------------------------------
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+")
_ENDS_SENTENCE = re.compile(r"[.!?][\"')\]]*$")


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def clean_context(request: str, text: str, book: RuleBook = GENERIC) -> tuple[str, list[str]]:
    """The model-written expert context cut to what passes, and what was cut (one phrase each): repeated
    paragraphs and sentences (kept once), a last sentence cut off mid-way, sentences about other organisms than
    the request's. Unusable when nothing is left."""
    cuts: list[str] = []
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    kept_p: list[str] = []
    for p in paragraphs:
        if _norm(p) in (_norm(k) for k in kept_p):
            continue
        kept_p.append(p)
    if len(kept_p) < len(paragraphs):
        cuts.append(_count(len(paragraphs) - len(kept_p), "repeated paragraph"))
    sentences = [s.strip() for p in kept_p for s in _SENTENCE_END.split(" ".join(p.split())) if s.strip()]
    kept: list[str] = []
    repeats, foreign, named = 0, 0, []
    for i, s in enumerate(sentences):
        if not _norm(s) or any(_said_in(s, k) for k in kept):
            repeats += 1
            continue
        if i == len(sentences) - 1 and not _ENDS_SENTENCE.search(s):
            cuts.append(f"a last sentence cut off mid-way (\"{_short(s, 60)}\")")
            continue
        others = foreign_organisms(request, s, book)
        if others:
            foreign += 1
            named += [o for o in others if o not in named]
            continue
        kept.append(s)
    if repeats:
        cuts.append(_count(repeats, "repeated sentence"))
    if foreign:
        cuts.append(_count(foreign, "sentence") + f" about other organisms than the request's ({', '.join(named)})")
    if not kept:
        raise Unusable("nothing in it passed the checks: " + "; ".join(cuts or ["no sentence"]))
    return " ".join(kept), cuts


def _content(sentence: str) -> set[str]:
    return {t for t in tokens(sentence) if t not in _FUNCTION_WORDS and t not in LINK_WORDS and t not in _GENERIC}


def _said_in(sentence: str, earlier: str) -> bool:
    """`sentence` repeats `earlier`: the same words, or (three content words or more) nothing `earlier` did not
    say already ("They can be found on every continent except Antarctica." after "They live in the tropics and
    can be found on every continent except Antarctica.")."""
    if _norm(sentence) == _norm(earlier):
        return True
    mine = _content(sentence)
    return len(mine) >= 3 and mine <= _content(earlier)


def _count(n: int, thing: str) -> str:
    return f"{n} {thing}" + ("" if n == 1 else "s")


def _short(text: str, n: int = 100) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n - 3].rstrip() + "..."


# ---- VisRet instruction ---------------------------------------------------------------------------------------
_NUMBERS = frozenset("one two three four five six seven eight nine ten eleven twelve dozen".split())
# words of a question that ask for something rather than name it: a description may leave them out
_ASKING = frozenset("what which how why when where who whose many much colour colours coloured size shape number "
                    "kind type look looks like does do did can tell".split())


def value_words(text: str) -> list[str]:
    """Colour and number words in `text` ('pinkish' counts as pink, digits as numbers)."""
    out = []
    for w in re.findall(r"[a-z0-9]+", text.lower()):
        base = w[:-3] if w.endswith("ish") and w[:-3] in rules.COLOURS else w
        if base in rules.COLOURS or base in _NUMBERS or base.isdigit():
            out.append(base)
    return out


def key_words(request: str) -> list[str]:
    """The words a rewrite of the request must keep: the content words of the request as a noun phrase
    (rules.subject_text: question words and asked values left out), without words that ask rather than name."""
    out = []
    for t in tokens(rules.subject_text(request)):
        if len(t) >= 2 and t not in _ASKING and t not in _FUNCTION_WORDS and t not in LINK_WORDS and t not in out:
            out.append(t)
    return out


def check_description(request: str, kind: str, description: str, whole_request: bool = True,
                      book: RuleBook = GENERIC) -> None:
    """A VisRet description says what to draw, keeps the request's subject and key qualifiers and states no
    answer: Unusable (with the reason) when it is a question, when it drops an organism the request names or more
    than half of the request's key words, or, for a question or a feature request, when it has a colour or
    number word the request does not have (the question's answer, invented), or names another organism.
    `whole_request` False (one of a comparison's two descriptions): the request's words are not required."""
    if description.rstrip().endswith("?") or QUESTION_START.match(description):
        raise Unusable(f"\"{_short(description)}\" is a question, not a description of what to draw")
    if is_question(request) or kind == "feature":
        added = [w for w in value_words(description) if w not in value_words(request)]
        if added:
            raise Unusable(f"\"{_short(description)}\" states an answer the request asks for or does not give "
                           f"({', '.join(dict.fromkeys(added))})")
    others = foreign_organisms(request, description, book)
    if others:
        raise Unusable(f"\"{_short(description)}\" names other organisms than the request's ({', '.join(others)})")
    if not whole_request:
        return
    have = token_set(description)
    keys = key_words(request)
    missing = [w for w in keys if not _has(w, have)]
    lost_organisms = [w for w in organisms_named(request) if w in missing]
    if lost_organisms or (keys and len(missing) * 2 > len(keys)):
        raise Unusable(f"\"{_short(description)}\" drops what the request names ({', '.join(missing)})")
