"""What an LLM's answer must mean to be used, checked by words (the JSON shape is checked in llm_schemas.py).

A real but small model (SmolLM2-135M) often answers in perfect JSON about the wrong thing: a picture
description without the organism, a reformulated caption that lost its subject, a decomposition with parts
the user never asked for, an answer citing photos it was not shown. Each check here raises Unusable with
the reason, and the task falls back to its rule (llm_tasks.ask adds the notice). Words are compared as the
decomposition compares them (lower case, simple plurals stripped, a compound counts for its head word)."""
from __future__ import annotations

import logging
import re

from core.contracts.world import rule_book
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
        raise Unusable(f"the {task} does not name the subject ({' '.join(words)})")


def from_request_words(part: str, request: str) -> bool:
    """Every content word of `part` occurs in the request (the words may be reordered; 'with' may link an
    organism to one of its attributes: "Slate Reedpiper with a black crest")."""
    need = [w for w in tokens(part) if w != "with"]
    have = token_set(request)
    return bool(need) and all(_has(w, have) for w in need)


def check_instruction(query: str, kind: str, descriptions: list[str], organisms: list[str]) -> None:
    """A comparison names each organism in its own description; any other description names the subject."""
    if kind == "comparison":
        if len(descriptions) != 2:
            raise Unusable("a comparison needs one description per organism")
        if organisms:
            for name in organisms:
                if not any(mentions(d, tokens(name)) for d in descriptions):
                    raise Unusable(f"no description names {name}")
            return
    for d in descriptions:
        require_subject("visualization instruction", query, d)


def is_yes_no(question: str) -> bool:
    """A question a yes/no judge can answer: it opens with "Is", "Does", ... and ends with "?"."""
    words = question.split()
    return bool(words) and words[0].capitalize() in YES_NO_OPENERS and question.rstrip().endswith("?")


def usable_subquestions(query: str, context: str, questions: list[str]) -> list[str]:
    """The model's questions a judge can use, in order: the first must be a yes/no question naming the request's
    subject (else Unusable); each later one must be a yes/no question about something the request or its notes
    name beyond the subject, else it is dropped (logged). Fewer than two usable questions is Unusable."""
    if not is_yes_no(questions[0]):
        raise Unusable(f"{questions[0]!r} is not a yes/no question")
    require_subject("sub-questions", query, questions[0])
    subject = set(subject_words(query))
    words = [w for w in tokens(query) if w not in subject and w not in _FUNCTION_WORDS]
    words += [w for w in tokens(context) if w not in subject and w not in _FUNCTION_WORDS and w not in LINK_WORDS
              and w not in _GENERIC and len(w) >= 3]
    kept = [questions[0]]
    for q in questions[1:]:
        why = ("is not a yes/no question" if not is_yes_no(q) else
               "asks about nothing the request needs beyond its subject" if not mentions(q, words) else "")
        if why:
            log.info("sub-questions: dropped %r: it %s", q, why)
        else:
            kept.append(q)
    if len(kept) < 2:
        raise Unusable("no question checks anything beyond the subject")
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


def keeps_subject(description: str, reformulation: str) -> None:
    """A PlugIR reformulation still names what the first description was about; a species of the field-guide
    world counts for the kind of organism it is ('a Slate Reedpiper perched on a branch' for 'a bird on a
    branch', once the user confirmed the species)."""
    kinds = rule_book().organism_kinds(reformulation)
    if kinds & {w[:-1] if w.endswith("s") else w for w in subject_words(description)}:
        return
    require_subject("reformulation", description, reformulation)
