"""The mutable plan the optimizer's rules edit (`PlanBuilder`), and the `Rule` type.

Its own module so that every rule module (`optimizer`, `shortcuts`, an arm's own rules) imports it
from below, and none imports another: the rules are functions over a builder, not over each other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from ..results import ARMS, Arm, EntityRef, ParsedQuery, QueryPlan
from ..types import MemoryType
from .shapes import MIN_REF_CONFIDENCE, strong_refs, topic_terms

__all__ = ["PlanBuilder", "Rule", "DEFAULT_HOPS", "describe_ref"]

DEFAULT_HOPS = 2


@dataclass
class PlanBuilder:
    """The mutable plan the rules edit, frozen into a `QueryPlan` by `build`.

    Starts with dense and lexical on; graph, temporal and type run only once a rule turns them on.
    Dense cannot be skipped: it is the arm that always has something to say, except by a plan that
    needs no query embedding at all (`take_shortcut`), which keeps the plan as it was as its fallback.
    `arms` are the arms a rule may turn on, in the order plans list them (the registry's,
    `retrievers.registry`); `needs` says, for an arm beyond the five, what it needs to run.
    """

    parsed: ParsedQuery
    weights: dict[str, float] = field(default_factory=lambda: {Arm.DENSE.value: 1.0, Arm.LEXICAL.value: 1.0})
    type_hints: set[MemoryType] = field(default_factory=set)
    strong_hints: set[MemoryType] = field(default_factory=set)
    max_hops: int = DEFAULT_HOPS
    hard_filter: bool = False
    reasons: list[str] = field(default_factory=list)
    reason_rules: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    rule: str = "manual"
    shortcut: str | None = None
    full: QueryPlan | None = None
    arms: tuple[str, ...] = ARMS
    needs: Mapping[str, str] = field(default_factory=dict)

    @property
    def fired(self) -> list[str]:
        """The rules that fired so far, in order."""
        out: list[str] = []
        for rule in self.reason_rules:
            if not out or out[-1] != rule:
                out.append(rule)
        return out

    def note(self, why: str) -> None:
        """Record that the current rule fired, and why (shown by `--explain`)."""
        self.reasons.append(f"{self.rule}: {why}")
        self.reason_rules.append(self.rule)

    def run(self, arm: str, weight: float = 1.0) -> None:
        if arm not in self.arms:
            raise ValueError(f"unknown arm {arm!r}; arms are {self.arms}")
        arm = str(arm)  # plans hold plain names (an `Arm` is one)
        self.weights[arm] = float(weight)
        self.skipped.pop(arm, None)

    def skip(self, arm: str, why: str) -> None:
        if arm == Arm.DENSE:
            raise ValueError("dense always runs")
        arm = str(arm)
        self.weights.pop(arm, None)
        self.skipped[arm] = why

    def take_shortcut(self, kind: str, arms: dict[str, float], why: str) -> None:
        """Run only `arms` (at these weights), with no query embedding: the plan built so far becomes
        the fallback, run when the shortcut finds nothing (`QueryPlan.fallback`). Once only."""
        if self.shortcut is not None:
            return
        self.full = self.build()
        for arm in [a for a in self.weights if a not in arms]:
            self.weights.pop(arm)
            self.skipped[arm] = f"{kind} plan: answered without a query embedding"
        for arm, weight in arms.items():
            self.run(arm, weight)
        self.shortcut, self.hard_filter = kind, False
        self.note(why)

    def hint(self, t: MemoryType, strong: bool = False) -> None:
        self.type_hints.add(t)
        if strong:
            self.strong_hints.add(t)

    @cached_property
    def lower(self) -> str:
        return self.parsed.text.lower()

    @cached_property
    def topic_terms(self) -> frozenset[str]:
        """Query terms left once the time phrase and topic-free words are removed (`shapes`)."""
        return topic_terms(self.parsed)

    def build(self) -> QueryPlan:
        arms = tuple(a for a in self.arms if a in self.weights)
        return QueryPlan(type_hints=frozenset(self.type_hints), arms=arms,
                         weights={a: self.weights[a] for a in arms}, max_hops=self.max_hops,
                         hard_filter=self.hard_filter, reasons=tuple(self.reasons),
                         skipped={a: self.skipped.get(a) or self._unplanned(a) for a in self.arms if a not in arms},
                         shortcut=self.shortcut, fallback=self.full, reason_rules=tuple(self.reason_rules))

    def _unplanned(self, arm: str) -> str:
        """Why an arm that no rule turned on does not run (the plan's `skipped`): what it would need.
        An explanation, not a rule: graph, temporal and type run only once a rule turns them on."""
        q = self.parsed
        if arm == Arm.GRAPH and not q.entity_refs:
            return "no entity in the query"
        if arm == Arm.GRAPH and not strong_refs(q):
            return (f"entities {', '.join(describe_ref(r) for r in q.entity_refs)} all below {MIN_REF_CONFIDENCE} "
                    "(too weak to walk from)")
        if arm == Arm.TEMPORAL and q.temporal_window is None and not q.time_cue:
            return "no time window and no time cue"
        if arm == Arm.TEMPORAL and q.temporal_window is None:
            return "a time cue but no window to filter on and no time asked for"
        if arm == Arm.TYPE and not self.type_hints:
            return "no type hint"
        return self.needs.get(arm, "no rule planned it")


Rule = Callable[[PlanBuilder, ParsedQuery], None]


def describe_ref(ref: EntityRef) -> str:
    """A query mention as plans name it: 'Sarah', or 'Sarah' (2 candidates: Sarah Chen 0.71, ...)."""
    if len(ref.candidates) <= 1:
        return repr(ref.text)
    listed = ", ".join(f"{c.name} {c.confidence:.2f}" for c in ref.candidates[:4])
    return f"{ref.text!r} ({len(ref.candidates)} candidates: {listed})"
