"""Value types shared by every layer. All are frozen dataclasses: results can be cached, hashed and
passed between threads without anyone mutating them underneath a caller."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from types import MappingProxyType
from typing import Any

from .errors import InvalidMemory, QueryError
from .validation import (MAX_NAME_BYTES, check_size, json_safe, memory_id_text, name_or_int, require_aware,
                         require_clean, require_storable, stable_json, thaw, utcnow)

__all__ = [
    "MemoryType",
    "Memory",
    "TimeWindow",
    "EntityCandidate",
    "EntityRef",
    "ParsedQuery",
    "QueryPlan",
    "Hit",
    "Contribution",
    "FusedHit",
    "ArmFailure",
    "Retrieval",
    "ARMS",
    "AMBIGUOUS_BELOW",
    "parse_memory_type",
    "type_list",
    "memory_id_text",
    "require_aware",
    "require_clean",
    "MAX_NAME_BYTES",
    "thaw",
    "utcnow",
    "stable_json",
]

#: The five arms, in the order explanations list them.
ARMS: tuple[str, ...] = ("dense", "lexical", "graph", "temporal", "type")


class MemoryType(str, Enum):
    """What kind of thing a memory records; drives the type arm and the hard pre-filter."""

    FACT = "fact"
    PREFERENCE = "preference"
    EVENT = "event"
    ENTITY = "entity"

    def __str__(self) -> str:  # "fact", not "MemoryType.FACT", in explanations and payloads
        return self.value


def type_list(value: Any) -> tuple[Any, ...] | None:
    """`types` as callers give it: None, one type (a `MemoryType` or its name: "fact" is one type,
    not four letters) or a collection of them, as a tuple; the names are checked where they are
    parsed (`parse_memory_type`). Anything else is a `QueryError`."""
    if value is None:
        return None
    if isinstance(value, (str, MemoryType)):
        return (value,)
    try:
        return tuple(value)
    except TypeError:
        raise QueryError(f"types must be a memory type or a list of them, got {type(value).__name__}") from None


def parse_memory_type(value: MemoryType | str) -> MemoryType:
    """Accept an enum or its string value (any case); anything else is a clear `QueryError`."""
    if isinstance(value, MemoryType):
        return value
    if isinstance(value, str):
        try:
            return MemoryType(value.strip().lower())
        except ValueError:
            pass
    allowed = ", ".join(t.value for t in MemoryType)
    raise QueryError(f"unknown memory type {value!r}; expected one of: {allowed}")


@dataclass(frozen=True)
class Memory:
    """One thing an agent remembers. `id` is derived from namespace and text when not given, so
    re-adding the same text is an idempotent upsert rather than a duplicate.

    `context` is text that helps *find* this memory without being part of it: in a conversation,
    the turns just before it (a reply like "They were scared but we reassured them" is found by
    the question it answers, "How did the kids handle the accident?"). It is indexed (BM25 at a
    reduced weight, and blended into the embedding) but never returned as the memory's text, and
    it does not change the derived id. `conversation_context` fills it from a session's order."""

    text: str
    namespace: str = "default"
    type: MemoryType | None = None
    id: str = ""
    predicate: str | None = None
    event_at: datetime | None = None
    created_at: datetime | None = None
    entities: tuple[str, ...] = ()
    session_id: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    context: str | None = None

    MAX_TEXT = 100_000

    def __post_init__(self) -> None:
        if not isinstance(self.text, str) or not self.text.strip():
            raise InvalidMemory("memory text must be a non-empty string")
        if len(self.text) > self.MAX_TEXT:
            raise InvalidMemory(f"memory text is {len(self.text)} characters; the limit is {self.MAX_TEXT}")
        require_clean(self.text, "memory text")
        if not isinstance(self.namespace, str) or not self.namespace.strip():
            raise InvalidMemory("namespace must be a non-empty string")
        require_clean(self.namespace, "namespace")
        check_size(self.namespace, "namespace")
        if self.type is not None:
            try:
                object.__setattr__(self, "type", parse_memory_type(self.type))
            except QueryError as exc:
                raise InvalidMemory(str(exc)) from None
        if self.predicate is not None:
            if not isinstance(self.predicate, str):
                raise InvalidMemory("predicate must be a string")
            require_clean(self.predicate, "predicate")
        for name in ("event_at", "created_at"):
            value = getattr(self, name)
            if value is not None:
                require_storable(value, f"Memory.{name}", InvalidMemory)
        if self.session_id is not None:
            object.__setattr__(self, "session_id", name_or_int(self.session_id, "session_id"))
            require_clean(self.session_id, "session_id")
        if self.context is not None:
            if not isinstance(self.context, str):
                raise InvalidMemory("context must be a string")
            if len(self.context) > self.MAX_TEXT:
                raise InvalidMemory(f"context is {len(self.context)} characters; the limit is {self.MAX_TEXT}")
            require_clean(self.context, "context")
            object.__setattr__(self, "context", self.context.strip() or None)
        if isinstance(self.entities, (str, bytes)):  # tuple("Tom") would be ("T", "o", "m")
            raise InvalidMemory(f"entities must be a list of names, not a single string: {self.entities!r} "
                                "(write a list, e.g. [\"Tom\"])")
        try:
            ents = tuple(self.entities)
        except TypeError:
            raise InvalidMemory(f"entities must be a list of names, got {type(self.entities).__name__}") from None
        for e in ents:
            if not isinstance(e, str) or not e.strip():
                raise InvalidMemory(f"entity {e!r} must be a non-empty string")
            require_clean(e, "entity")
            check_size(e, "entity")
        object.__setattr__(self, "entities", ents)
        object.__setattr__(self, "metadata", json_safe(dict(self.metadata or {}), "metadata"))
        if self.id is None or self.id == "":
            digest = hashlib.sha256(f"{self.namespace}\x1f{self.text}".encode()).hexdigest()[:24]
            object.__setattr__(self, "id", f"m-{digest}")
        else:  # id=0 is the id "0", not "no id"
            object.__setattr__(self, "id", name_or_int(self.id, "memory id"))
        require_clean(self.id, "memory id")
        check_size(self.id, "memory id")

    def with_(self, **changes: Any) -> Memory:
        """A copy with some fields changed (dataclasses.replace, validated again)."""
        from dataclasses import replace
        return replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        """A JSON-safe dict (ISO datetimes) for adapters, CLI output and reports."""
        return {
            "id": self.id, "namespace": self.namespace, "text": self.text,
            "type": self.type.value if self.type else None, "predicate": self.predicate,
            "event_at": self.event_at.isoformat() if self.event_at else None,
            "created_at": self.created_at.isoformat() if self.created_at else None,
            "entities": list(self.entities), "session_id": self.session_id,
            "metadata": thaw(self.metadata), "context": self.context,
        }


@dataclass(frozen=True)
class TimeWindow:
    """A closed interval [start, end] of aware datetimes; never inverted."""

    start: datetime
    end: datetime

    def __post_init__(self) -> None:
        require_aware(self.start, "TimeWindow.start")
        require_aware(self.end, "TimeWindow.end")
        if self.start > self.end:
            raise QueryError(f"time window starts after it ends: {self.start} > {self.end}")

    def contains(self, when: datetime) -> bool:
        return self.start <= when <= self.end

    def clip_to(self, now: datetime) -> TimeWindow | None:
        """Clip the end to `now`; a window that lies wholly in the future gives None."""
        if self.start > now:
            return None
        return TimeWindow(self.start, min(self.end, now))

    def __str__(self) -> str:
        return f"[{self.start.isoformat()} .. {self.end.isoformat()}]"


@dataclass(frozen=True)
class EntityCandidate:
    """One entity a query mention may refer to, with the resolver's confidence in [0, 1]."""

    entity_id: str
    name: str
    confidence: float = 1.0


#: A ref whose best candidate is below this is ambiguous: the graph arm fans out from every candidate.
AMBIGUOUS_BELOW = 0.7


@dataclass(frozen=True)
class EntityRef:
    """A mention in the query ("Sarah") and the entities it may resolve to, best first."""

    text: str
    candidates: tuple[EntityCandidate, ...] = ()
    source: str = "known"  # "known" (phrase matcher) or "ner" (spaCy fallback)

    @property
    def ambiguous(self) -> bool:
        return not self.candidates or self.candidates[0].confidence < AMBIGUOUS_BELOW


@dataclass(frozen=True)
class ParsedQuery:
    """Stage 1 output: everything the arms need to know about the query text."""

    text: str
    now: datetime
    terms: tuple[str, ...] = ()
    identifiers: tuple[str, ...] = ()
    entity_refs: tuple[EntityRef, ...] = ()
    temporal_window: TimeWindow | None = None
    time_cue: bool = False
    temporal_phrase: str | None = None
    #: What the answer looks like, when the question says: "time" for "when did...?" (`cues.asks_time`).
    answer_type: str | None = None


@dataclass(frozen=True)
class QueryPlan:
    """Stage 2 output: which arms run, at what weight, with which type hints, and why."""

    type_hints: frozenset[MemoryType] = frozenset()
    arms: tuple[str, ...] = ("dense", "lexical")
    weights: Mapping[str, float] = field(default_factory=dict)
    max_hops: int = 2
    hard_filter: bool = False
    reasons: tuple[str, ...] = ()
    skipped: Mapping[str, str] = field(default_factory=dict)
    #: What the vector arms embed when it is not the query itself: the query without the names of
    #: hub entities (`optimizer.mask_hub_names`). None: the query text.
    embed_text: str | tuple[str, ...] | None = None
    #: Entity names, as memories store them, whose memories the graph arm ranks by relevance instead
    #: of traversing from them: set when every seed is a hub (`store_rules.scope_hub_seeds`). Empty:
    #: the graph arm traverses.
    graph_scope: tuple[str, ...] = ()
    #: (entity id, relation, forward) the query asks (`query.relations`): the graph arm re-roots there.
    asked_relations: tuple[tuple[str, str, bool], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "weights", MappingProxyType(dict(self.weights)))
        object.__setattr__(self, "skipped", MappingProxyType(dict(self.skipped)))
        object.__setattr__(self, "type_hints", frozenset(self.type_hints))

    def weight(self, arm: str) -> float:
        return float(self.weights.get(arm, 1.0))

    def to_json(self) -> dict[str, Any]:
        """JSON-safe, for traces (`QueryOptimizerChain`'s output) and `Retrieval.to_json()`."""
        return {"arms": list(self.arms), "type_hints": sorted(t.value for t in self.type_hints),
                "weights": dict(self.weights), "max_hops": self.max_hops, "hard_filter": self.hard_filter,
                "reasons": list(self.reasons), "skipped": dict(self.skipped)}


@dataclass(frozen=True)
class Hit:
    """One arm's answer for one memory: score in [0, 1] (higher is better). `detail` explains the
    score in the arm's own terms (a graph path, the matched window); `memory` is filled when the arm
    already has the payload, which saves a hydration round trip. Inside the ensemble the vector arms
    hand over the raw stored `payload` instead, and only the hits that make the fused top k are
    turned into `Memory` objects (building ~150 per query was ~0.7 ms of CPU for nothing)."""

    memory_id: str
    score: float
    detail: str | None = None
    memory: Memory | None = None
    payload: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        s = float(self.score)
        if not math.isfinite(s):
            s = 0.0
        object.__setattr__(self, "score", min(1.0, max(0.0, s)))


@dataclass(frozen=True)
class Contribution:
    """How much one arm added to one fused score: w * sqrt(score) / (k + rank)."""

    arm: str
    rank: int
    raw_score: float
    weight: float
    contribution: float
    detail: str | None = None


@dataclass(frozen=True)
class FusedHit:
    """A memory in the fused ranking, with every arm's share of its score."""

    memory: Memory
    score: float
    rank: int
    contributions: tuple[Contribution, ...]
    k: int = 60

    def explain(self) -> str:
        """e.g. `lexical#1(0.93) + dense#4(0.81) k=10 -> 0.1627`."""
        parts = " + ".join(f"{c.arm}#{c.rank}({c.raw_score:.2f})" for c in self.contributions)
        return f"{parts or 'none'} k={self.k} -> {self.score:.4f}"

    def to_json(self) -> dict[str, Any]:
        return {
            "memory": self.memory.to_json(), "score": self.score, "rank": self.rank,
            "explain": self.explain(),
            "contributions": [
                {"arm": c.arm, "rank": c.rank, "raw_score": c.raw_score, "weight": c.weight,
                 "contribution": c.contribution, "detail": c.detail}
                for c in self.contributions
            ],
        }


@dataclass(frozen=True)
class ArmFailure:
    """An arm that was planned but gave no answer: it raised, or it ran past its timeout; or one
    whose hits were left out because their memories could not be read ("hydration")."""

    arm: str
    reason: str
    kind: str = "error"  # "error" | "timeout" | "hydration"


@dataclass(frozen=True)
class Retrieval:
    """The ensemble's answer: fused hits plus everything needed to explain and debug them."""

    hits: tuple[FusedHit, ...]
    plan: QueryPlan
    parsed: ParsedQuery | None = None
    failures: tuple[ArmFailure, ...] = ()
    widened: tuple[str, ...] = ()
    timings_ms: Mapping[str, float] = field(default_factory=dict)
    #: Arms whose search was read off a broader one of the same query (`FusionConfig.pool_min`).
    pooled: tuple[str, ...] = ()

    @property
    def skipped(self) -> Mapping[str, str]:
        return self.plan.skipped

    def ids(self) -> list[str]:
        return [h.memory.id for h in self.hits]

    def explain(self) -> str:
        """A multi-line human explanation of the whole retrieval (CLI `--explain`)."""
        lines = [f"plan: arms={','.join(self.plan.arms)} hints="
                 f"{','.join(sorted(t.value for t in self.plan.type_hints)) or '-'}"]
        lines += [f"  why: {r}" for r in self.plan.reasons]
        lines += [f"  skipped {a}: {why}" for a, why in self.plan.skipped.items()]
        lines += [f"  FAILED {f.arm} ({f.kind}): {f.reason}" for f in self.failures]
        lines += [f"  widened {a}: type filter left too few results, searched all types" for a in self.widened]
        lines += [f"  pooled {a}: its filter applied to a broader search's results, no search of its own"
                  for a in self.pooled]
        if self.timings_ms:
            lines.append("  timings: " + ", ".join(f"{a}={ms:.1f}ms" for a, ms in self.timings_ms.items()))
        for h in self.hits:
            lines.append(f"{h.rank:>3}. [{h.memory.type or '?'}] {h.memory.text}")
            lines.append(f"     {h.explain()}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "hits": [h.to_json() for h in self.hits],
            "plan": self.plan.to_json(),
            "failures": [{"arm": f.arm, "kind": f.kind, "reason": f.reason} for f in self.failures],
            "widened": list(self.widened), "pooled": list(self.pooled), "timings_ms": dict(self.timings_ms),
        }
