"""What a dialogue has learnt from yes/no answers, as constraints on the candidates: each answered question is
put to the judge for the best-ranked candidates, and those whose answer contradicts the user's move down (a
filter on the judged attribute). Questions are compared by a normalised key (their facts in the field-guide
world's terms, else their content words), never by wording, so a question is never asked twice."""
from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from typing import Any, Callable, Sequence

from core.backends.base import JudgeRequest
from core.contracts.world import GENERIC, RuleBook
from core.methods.confidence import NO, YES, p_yes, verdict

log = logging.getLogger(__name__)


def question_key(question: str, book: RuleBook = GENERIC) -> str:
    """'view=underside' for both "Is it seen from below?" and "Is this an underside view?"; content words
    ("words:nest,twig") for questions outside `book`'s terms."""
    facts = book.question_facts(question)
    if facts:
        return "|".join(sorted(f for f in facts if not f.startswith("part:")) or sorted(facts))
    return "words:" + ",".join(sorted(book.content_key(question)))


@dataclass
class Constraint:
    """One answered question: the candidates the judge answers the other way move down."""

    question: str
    key: str
    wanted: bool  # True: the user said yes; False: no (a negative constraint)
    checked: int = 0  # candidates the judge looked at so far
    contradicting: int = 0  # of those, how many answered the other way (moved down)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class ConstraintChecker:
    """Judges (photo, question) pairs once each and reorders a ranking by how many constraints a photo breaks."""

    def __init__(self, backends, photos: Callable[[Sequence[int]], list], load: Callable[[Any], Any], query: str,
                 notice: Callable[[str], None], band: float):
        self.backends, self.photos, self.load, self.query, self.notice = backends, photos, load, query, notice
        self.band = band  # setting undecided_band: a "can't tell" neither keeps nor moves a photo
        self.memo: dict[tuple[int, str], float] = {}
        self.failed = False

    def _p_yes(self, photo, question: str) -> float | None:
        """The judge's p(yes), or None when it could not check the question on this photo (an abstention
        neither keeps nor moves the photo)."""
        key = (int(photo.id), question)
        if key not in self.memo:
            req = JudgeRequest(image=None, question=question, query=self.query, photo=photo)
            try:
                ans = self.backends.judge.ask(req, load=lambda p=photo: self.load(p))
            except Exception as exc:  # a failed judge leaves the ranking as the embedding made it
                log.exception("dialogue constraint check: the judge failed on photo %s", photo.id)
                self.notice(f"the judge failed while checking answers against the candidates ({exc}); those "
                            "answers only changed the description")
                self.failed = True
                return None
            if getattr(ans, "abstained", False):
                log.info("dialogue constraint check: %r not checked on photo %s (%s)", question, photo.id, ans.reason)
            self.memo[key] = None if getattr(ans, "abstained", False) else p_yes(ans.top_logprobs)
        return self.memo[key]

    def reorder(self, ranked: list[tuple[int, float]], constraints: Sequence[Constraint],
                depth: int) -> list[tuple[int, float]]:
        """The top `depth` of `ranked` sorted by the number of broken constraints (then the original order);
        the rest unchanged. A photo breaks a constraint when the judge's verdict is the other one (a "can't
        tell" inside the undecided band, like "not checked", breaks none)."""
        if not constraints or depth <= 0 or self.failed:
            return ranked
        head, tail = ranked[:depth], ranked[depth:]
        photos = {p.id: p for p in self.photos([i for i, _ in head])}
        broken: dict[int, int] = {}
        for c in constraints:
            c.checked = c.contradicting = 0
            for pid, _ in head:
                photo = photos.get(pid)
                p = self._p_yes(photo, c.question) if photo is not None else None
                if self.failed:
                    return ranked
                said = verdict(p, self.band)
                if said not in (YES, NO):
                    continue
                c.checked += 1
                if (said == YES) != c.wanted:
                    c.contradicting += 1
                    broken[pid] = broken.get(pid, 0) + 1
        order = sorted(range(len(head)), key=lambda r: (broken.get(head[r][0], 0), r))
        return [head[r] for r in order] + tail
