"""Which organism of a two-organism question a search ranks, chosen by name.

Visual-RAG-ME scores each organism of a comparison on its own, and its released file names the organism of
each item by scientific name (`sn[i]` for entity_i), while the question may name the second one first. So
the organism is matched by name against the instruction's organisms and descriptions (the LLM's or the
rule's), never by position. When no description names it (the query was not read as a comparison, or the
LLM left the name out), a description of that organism alone is written for it, as VisRet's own script does
by giving the LLM the entity of interest."""
from __future__ import annotations

import logging
import re
from typing import Callable

from core.methods.decompose import tokens
from core.methods.instruction import Instruction
from core.methods.llm_call import ask, parse_json
from core.methods.rules import COLOURS
from core.prompts import visret as visret_prompts

log = logging.getLogger(__name__)

# "the goat moth (scientific name: Cossus cossus)", "Fieldfare (Turdus pilaris)"
_NAMED = re.compile(r"([A-Za-z][\w'-]*(?:\s+[A-Za-z][\w'-]*){0,4})\s*\((?:scientific\s+name:\s*)?([^()]{2,80})\)",
                    re.IGNORECASE)
_LEAD = {"the", "a", "an", "of", "that", "those", "and", "or", "larva", "larval", "which", "one", "consider",
         "between", "compare", "is", "are", "do", "does", "has", "have"}
_FRAME = frozenset(
    "what which how who does do did is are was were has have had one ones the a an of difference differences "
    "between compare comparison colour color colours colors shape pattern size length longer shorter larger "
    "smaller bigger darker lighter brighter more less than vs versus or and both same differ from that those "
    "them consider normally usually typically would not its their scientific name kind".split())
MIN_SHARE = 0.5  # a description must hold at least half of a name's words to count as naming it


def mentions(query: str) -> list[tuple[str, str]]:
    """(common name, scientific name) for every organism the query names with a bracketed name, in order."""
    out = []
    for m in _NAMED.finditer(query or ""):
        words = m.group(1).split()
        while words and words[0].lower() in _LEAD:
            words = words[1:]
        out.append((" ".join(words), " ".join(m.group(2).split())))
    return out


def aliases(name: str, query: str) -> list[str]:
    """`name` and the common name the query writes beside it ("goat moth" for "Cossus cossus")."""
    want = set(tokens(name))
    out = [name]
    for common, scientific in mentions(query):
        if want and (want == set(tokens(scientific)) or want == set(tokens(common))):
            out += [n for n in (common, scientific) if n and n not in out]
    return out


def _share(alias: str, text_tokens: set[str]) -> float:
    words = set(tokens(alias))
    return len(words & text_tokens) / len(words) if words else 0.0


def match_organism(name: str, instr: Instruction, query: str = "") -> int | None:
    """Index of the description that names organism `name` (scientific or common; the query's bracketed
    names give the other form), or None when no single description names it better than every other."""
    if not name.strip() or len(instr.descriptions) < 2:
        return None
    names = aliases(name, query)
    scores = []
    for i, desc in enumerate(instr.descriptions):
        text = desc + " " + (instr.organisms[i] if i < len(instr.organisms) else "")
        have = set(tokens(text))
        scores.append(max(_share(a, have) for a in names))
    best = max(scores)
    if best < MIN_SHARE or scores.count(best) > 1:
        return None
    return scores.index(best)


def _part_words(query: str) -> str:
    """The query's words that are neither question framing, colours nor organism names: the part asked about."""
    names = set()
    for common, scientific in mentions(query):
        names |= {w.lower() for w in re.findall(r"[A-Za-z'-]+", common + " " + scientific)}
    bare = _NAMED.sub(" ", query)
    words = [w for w in re.findall(r"[A-Za-z'-]+", bare) if w.lower() not in _FRAME and w.lower() not in names
             and not any(c in w.lower() for c in COLOURS)]
    return " ".join(dict.fromkeys(words))


def rule_description(query: str, name: str) -> str:
    """The offline rule's picture description for one named organism: its names, then the part in view."""
    want = set(tokens(name))
    label = next((f"{common} ({scientific})" if common else scientific for common, scientific in mentions(query)
                  if want in (set(tokens(common)), set(tokens(scientific)))), name)
    part = _part_words(query)
    return f"a {label}, {part} clearly visible" if part else f"a {label}, whole body in clear view"


def organism_description(llm, query: str, name: str, notices: list[str]) -> str:
    """A picture description of organism `name` alone for the question `query` (LLM, else the rule)."""
    def parse(text: str) -> str | None:
        desc = " ".join(str(parse_json(text).get("description", "")).split())
        return desc if desc and len(desc.split()) <= 60 else None

    value, _ = ask(llm, "organism instruction", visret_prompts.ORGANISM_SYSTEM,
                   visret_prompts.organism_user(query, name), parse, lambda: rule_description(query, name),
                   notices, json_schema={"type": "object"})
    return value


def choose(instr: Instruction, organism: int | None, name: str, query: str, llm, notices: list[str],
           notice: Callable[[str], None]) -> tuple[list[int], str]:
    """The descriptions to retrieve with and how they were chosen ("all", "by name", "written for it",
    "by position", "single instruction"). A description written for a named organism is appended to `instr`.
    `notices` collects the LLM task's own fallback notes; `notice` tells the user what was chosen."""
    if name.strip():
        found = match_organism(name, instr, query)
        if found is not None:
            return [found], "by name"
        desc = organism_description(llm, query, name, notices)
        log.info("no description names %r; wrote one for it: %r", name, desc)
        notice(f"the instruction did not name {name} on its own; a description of {name} alone was written "
               "for this search")
        instr.descriptions.append(desc)
        instr.organisms.extend([""] * (len(instr.descriptions) - 1 - len(instr.organisms)))
        instr.organisms.append(name)
        return [len(instr.descriptions) - 1], "written for it"
    if organism is None:
        return list(range(len(instr.descriptions))), "all"
    if organism < len(instr.descriptions):
        return [organism], "by position"
    notice(f"organism {organism + 1} was asked for, but the query was not read as a comparison of two "
           "organisms; its single instruction was used")
    return [0], "single instruction"

