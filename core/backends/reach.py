"""A judge's reach: the abstention ("not checked", and why) that every judge may give instead of yes or no,
and the phrases of a question a judge cannot see ("calling", "at night").

A judge abstains when it cannot answer a question from the photo: the stand-in field-guide judge on words
none of its heads reads, the CLIP statement judge inside its undecided band or on things with no visual
statement (sounds, time of day), a real vision-language model when its first answer token puts most of its
probability on neither yes nor no. The rerank counts an abstention as undecided (0.5), neither pass nor fail."""
from __future__ import annotations

import re
from typing import Callable, Iterable

from core.backends.base import JudgeAnswer
from core.contracts.verdicts import NOT_CHECKED  # the answer word of an abstention (re-exported here)

# prepositions that open a phrase of their own ("calling | at night", "singing | at dawn | in the rain")
OPENERS = frozenset("at in on by with during under over near before after from into for around among".split())
# words that belong to no phrase: articles, auxiliaries and the words every yes/no question is framed with
FILLERS = frozenset(
    "a an the is are was were be been being does do did can could has have had it its it's this that these those "
    "there their they them of and or to photo photos picture pictures image images shown show shows visible "
    "clearly any some".split())
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


def abstain(why: str, unchecked: Iterable[str] = ()) -> JudgeAnswer:
    """An abstention: no yes or no, no confidence; `why` is the one-line reason shown to the user."""
    return JudgeAnswer(answer=NOT_CHECKED, top_logprobs={}, reason=why, abstained=True,
                       unchecked=tuple(dict.fromkeys(p for p in unchecked if p)))


def phrases(text: str, unseen: Callable[[str], bool]) -> list[str]:
    """The phrases of `text` made of words for which `unseen(word)` holds, in order and without repeats.
    A phrase is a run of unseen words; a preposition just before an unseen word opens a new phrase and an
    article inside it is kept ("Is the frog calling at night?" -> ["calling", "at night"])."""
    out: list[str] = []
    current: list[str] = []
    pending: list[str] = []  # an opener (and articles after it) waiting for an unseen word

    def close() -> None:
        if current:
            out.append(" ".join(current))
        current.clear()

    for word in _WORD.findall(text or ""):
        low = word.lower().strip("'")
        if low in OPENERS:
            close()
            pending = [low]
        elif low in ("a", "an", "the") and pending:
            pending.append(low)
        elif low not in FILLERS and unseen(low):
            if pending:
                close()
                current.extend(pending)
                pending = []
            current.append(low)
        else:
            close()
            pending = []
    close()
    return list(dict.fromkeys(out))


def merge(found: Iterable[Iterable[str]]) -> list[str]:
    """The phrases of several answers, in first-seen order, each once."""
    return list(dict.fromkeys(p for group in found for p in group if p))


def notice_text(parts: Iterable[str]) -> str:
    """The one notice of a search that names what no photo checker checked."""
    return "not checked by the photo checker: " + ", ".join(parts)
