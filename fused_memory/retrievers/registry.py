"""The arms as data: one `ArmSpec` per arm, and the registry the ensemble, the optimizer, the learned
order's features, the evaluation and both framework integrations read.

A built-in arm is a module (its `Retriever`, and the optimizer rules that plan it) plus one entry in
`BUILTIN_ARMS` below. Everything that differs per arm reads the spec:

* the ensemble builds the arm with `make(source)` and plans it with `rules` (run before the
  shortcuts; the five built-ins are planned by `query.optimizer.DEFAULT_RULES`, which weigh them
  against each other);
* `weight` and `timeout_s` are its defaults (`FusionConfig.weights` / `timeouts_s` override them);
* `needs` is what a plan says when no rule planned it (`QueryPlan.skipped`);
* the learned order gives it `ranking.features.PER_ARM` columns named after it; a ranker trained
  without them is refused when the ensemble is built, naming the arm (train one with it);
* `class_name` names its framework retriever (`langchain_fused_memory` and the LlamaIndex package
  give a registered arm one with `arm_retriever(name)`).

`EnsembleMemory(store, registry=BUILTIN_ARMS.with_(spec))` runs an arm beyond the five without
touching the package (the toy arm in tests/integration/test_arm_registry.py walks it end to end).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..config import DEFAULT_TIMEOUTS_S, DEFAULT_WEIGHTS, RESERVED_NAMES
from ..errors import ConfigurationError
from ..query.plan_builder import Rule
from ..results import Arm
from .base import MemorySource, Retriever
from .graph import GraphRetriever
from .lexical import LexicalRetriever
from .vector import DenseRetriever, TemporalRetriever, TypeFilterRetriever

__all__ = ["ArmSpec", "ArmRegistry", "BUILTIN_ARMS"]


@dataclass(frozen=True)
class ArmSpec:
    """One arm as the package knows it (see the module docstring for who reads which field)."""

    name: str
    make: Callable[[MemorySource], Retriever]
    weight: float = 1.0
    timeout_s: float = 2.0
    rules: tuple[Rule, ...] = ()
    needs: str = "no rule planned it"
    class_name: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.isidentifier() or self.name != self.name.lower():
            raise ConfigurationError(f"an arm's name is a lowercase identifier, got {self.name!r}")
        if self.name in RESERVED_NAMES:
            raise ConfigurationError(f"arm name {self.name!r} is reserved for the stage after fusion")
        if not callable(self.make):
            raise ConfigurationError(f"arm {self.name!r}: make must build its Retriever from a store")
        object.__setattr__(self, "name", str(self.name))


@dataclass(frozen=True)
class ArmRegistry:
    """The arms an ensemble knows, in the order plans and explanations list them. Frozen: `with_`
    returns a new registry."""

    specs: tuple[ArmSpec, ...]
    by_name: Mapping[str, ArmSpec] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not all(isinstance(s, ArmSpec) for s in self.specs):
            raise ConfigurationError("an ArmRegistry holds ArmSpecs")
        names = [s.name for s in self.specs]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ConfigurationError(f"arm(s) {twice} registered twice")
        object.__setattr__(self, "specs", tuple(self.specs))
        object.__setattr__(self, "by_name", MappingProxyType({s.name: s for s in self.specs}))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.specs)

    def __contains__(self, name: object) -> bool:
        return name in self.by_name

    def __iter__(self) -> Iterator[ArmSpec]:
        return iter(self.specs)

    def __getitem__(self, name: str) -> ArmSpec:
        try:
            return self.by_name[name]
        except KeyError:
            raise ConfigurationError(f"unknown retriever {name!r}; choose one of {', '.join(self.names)}") from None

    def with_(self, *specs: ArmSpec) -> ArmRegistry:
        """This registry with `specs` added after its own arms."""
        return ArmRegistry((*self.specs, *specs))

    @property
    def extra(self) -> tuple[ArmSpec, ...]:
        """The arms beyond the five built-ins."""
        return tuple(s for s in self.specs if s.name not in _BUILTIN_NAMES)

    def rules(self) -> tuple[Rule, ...]:
        """The optimizer rules of the arms beyond the five, in registry order."""
        return tuple(r for s in self.extra for r in s.rules)

    def needs(self) -> Mapping[str, str]:
        return {s.name: s.needs for s in self.extra}

    def make(self, name: str, source: Any) -> Retriever:
        return self[name].make(source)


def _graph(source: MemorySource) -> Retriever:
    if getattr(source, "graph", None) is None:
        raise ConfigurationError("this store has no graph backend")
    return GraphRetriever(source)


_BUILTIN_NAMES = frozenset(a.value for a in Arm)

#: The five built-in arms. A sixth is one more entry here (and its module).
BUILTIN_ARMS = ArmRegistry((
    ArmSpec(Arm.DENSE.value, DenseRetriever, DEFAULT_WEIGHTS[Arm.DENSE], DEFAULT_TIMEOUTS_S[Arm.DENSE],
            class_name="DenseMemoryRetriever"),
    ArmSpec(Arm.LEXICAL.value, LexicalRetriever, DEFAULT_WEIGHTS[Arm.LEXICAL], DEFAULT_TIMEOUTS_S[Arm.LEXICAL],
            class_name="BM25MemoryRetriever"),
    ArmSpec(Arm.GRAPH.value, _graph, DEFAULT_WEIGHTS[Arm.GRAPH], DEFAULT_TIMEOUTS_S[Arm.GRAPH],
            class_name="GraphMemoryRetriever"),
    ArmSpec(Arm.TEMPORAL.value, TemporalRetriever, DEFAULT_WEIGHTS[Arm.TEMPORAL], DEFAULT_TIMEOUTS_S[Arm.TEMPORAL],
            class_name="TemporalMemoryRetriever"),
    ArmSpec(Arm.TYPE.value, TypeFilterRetriever, DEFAULT_WEIGHTS[Arm.TYPE], DEFAULT_TIMEOUTS_S[Arm.TYPE],
            class_name="TypeFilterMemoryRetriever"),
))
