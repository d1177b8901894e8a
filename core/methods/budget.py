"""Per-query budgets of costly backend calls (generated pictures, judge calls), safe across threads."""
from __future__ import annotations

import threading

from core.contracts.errors import BudgetExceeded


class Budget:
    """Counts spending against limits; `take` raises BudgetExceeded once a limit would be passed and records a
    notice once per kind."""

    def __init__(self, max_generated: int, max_judge_calls: int):
        self.limits = {"generated": int(max_generated), "judge": int(max_judge_calls)}
        self.used = {"generated": 0, "judge": 0}
        self.exhausted: set[str] = set()
        self._lock = threading.Lock()

    def take(self, kind: str, n: int = 1) -> None:
        with self._lock:
            if self.used[kind] + n > self.limits[kind]:
                self.exhausted.add(kind)
                raise BudgetExceeded(f"the per-query budget of {self.limits[kind]} {kind} calls is used up",
                                     f"raise max_{'generated' if kind == 'generated' else 'judge_calls'} in settings")
            self.used[kind] += n

    def notices(self) -> list[str]:
        names = {"generated": ("generated pictures", "max_generated"), "judge": ("judge calls", "max_judge_calls")}
        return [f"budget reached: at most {self.limits[k]} {names[k][0]} per query (setting {names[k][1]}); "
                "the rest of that stage was skipped" for k in sorted(self.exhausted)]


class BudgetedJudge:
    """A judge that spends one unit of the judge budget per real call (put it under the cache)."""

    def __init__(self, judge, budget: Budget):
        self.inner, self.budget = judge, budget
        self.model_id, self.is_standin = judge.model_id, judge.is_standin
        self.prompt_id = getattr(judge, "prompt_id", "")

    def ask(self, request):
        self.budget.take("judge")
        return self.inner.ask(request)

    def unseen(self, text: str) -> list[str]:
        """What the judge says it cannot check (free: no call is spent)."""
        found = getattr(self.inner, "unseen", None)
        return list(found(text)) if callable(found) else []


class BudgetedGenerator:
    def __init__(self, generator, budget: Budget):
        self.inner, self.budget = generator, budget
        self.model_id, self.is_standin = generator.model_id, generator.is_standin

    def generate(self, prompt: str, *, seed: int, size: int = 224):
        self.budget.take("generated")
        return self.inner.generate(prompt, seed=seed, size=size)

    @property
    def supports_references(self) -> bool:
        """Whether the generator can compose from reference pictures (checked before spending the budget)."""
        return callable(getattr(self.inner, "generate_from_references", None))

    def generate_from_references(self, prompt: str, references, *, seed: int, size: int = 224):
        self.budget.take("generated")
        return self.inner.generate_from_references(prompt, references, seed=seed, size=size)
