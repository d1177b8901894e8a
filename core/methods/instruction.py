"""VisRet's picture instruction: what the LLM (or the rule) says to draw for one query."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class Instruction:
    """VisRet's picture description(s): one per organism for comparisons, else one."""

    kind: str  # feature | comparison | scene
    descriptions: list[str]
    organisms: list[str] = field(default_factory=list)
    source: str = "rule"

    def to_json(self) -> dict:
        return asdict(self)
