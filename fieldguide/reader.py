"""The offline photo reader of the field-guide world (answer_reader='fieldguide', or 'auto' with the
field-guide judge): a stand-in that answers colour questions by reading the asked part's colour from each
photo's pixels with the field-guide encoder's attribute heads (never from metadata), per organism the
question names, citing the photos that show the part."""
from __future__ import annotations

from collections import defaultdict
from typing import Sequence

from PIL import Image

from fieldguide.reading import read_text
from fieldguide.species import PART_PHRASE, SPECIES

SEEN = 0.5  # a part counts as visible when the heads give "none" (not visible) less than this


class FieldGuideReader:
    model_id = "fieldguide-reader@v1"
    is_standin = True

    def __init__(self, reader=None):
        if reader is None:
            from fieldguide.encoder import FieldGuideEmbedder

            reader = FieldGuideEmbedder()
        self.heads = reader  # anything with attribute_probs(images) -> [head -> {label: p}]

    @classmethod
    def from_settings(cls, settings=None, embedder=None) -> "FieldGuideReader":
        return cls(embedder if hasattr(embedder, "attribute_probs") else None)

    def read(self, question: str, photos: Sequence[tuple[int, Image.Image]]) -> str:
        if not photos:
            return "No photo was retrieved, so the question cannot be answered from photos."
        r = read_text(question)
        parts = [p for p in r.parts if f"colour:{p}" in self._probe()]
        probs = self.heads.attribute_probs([im for _, im in photos])
        names = {sp.scientific_name: sp.common_name for sp in SPECIES}
        if not parts:  # nothing the heads can read a colour of: say which organisms the photos show
            seen: dict[str, list[int]] = defaultdict(list)
            for (pid, _), p in zip(photos, probs):
                sp = max(p["species"], key=p["species"].get)
                seen[names.get(sp, "no organism of the world")].append(pid)
            listing = "; ".join(f"{who} {''.join(f'[{i}]' for i in ids)}" for who, ids in seen.items())
            return f"The photos show: {listing}. They were not read for anything more specific."
        wanted = [sp.scientific_name for sp in r.species]
        by_species: dict[str, list[int]] = defaultdict(list)
        for k, p in enumerate(probs):
            sp = max(p["species"], key=p["species"].get)
            by_species[sp if not wanted or sp in wanted else ""].append(k)
        groups = [(sp, by_species.get(sp, [])) for sp in wanted] or [("", list(range(len(photos))))]
        sentences = []
        for sp, rows in groups:
            who = names.get(sp, sp) or "the organism"
            for part in parts:
                sentences.append(self._part_sentence(who, part, rows, probs, photos))
        return " ".join(sentences)

    def _probe(self) -> set[str]:
        from fieldguide.encoder import HEADS

        return set(HEADS)

    @staticmethod
    def _part_sentence(who: str, part: str, rows: list[int], probs, photos) -> str:
        phrase = PART_PHRASE.get(part, part)
        if not rows:
            return f"None of the photos shows the {who}."
        keys = [f"colour:{part}"]
        votes: dict[str, float] = defaultdict(float)
        cited: dict[str, list[int]] = defaultdict(list)
        for k in rows:
            for key in keys:
                dist = probs[k][key]
                if dist.get("none", 0.0) < SEEN:
                    colour = max((c for c in dist if c != "none"), key=dist.get)
                    votes[colour] += dist[colour]
                    cited[colour].append(photos[k][0])
        if not votes:
            ids = "".join(f"[{photos[k][0]}]" for k in rows[:3])
            return f"The photos of the {who} do not show its {phrase} {ids}."
        best = max(votes, key=votes.get)
        ids = "".join(f"[{pid}]" for pid in dict.fromkeys(cited[best]))
        verb = "are" if phrase.split()[-1].endswith("s") and not phrase.endswith("ss") else "is"  # wings are
        return f"The {phrase} of the {who} {verb} {best} {ids}."
