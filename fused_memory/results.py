"""What a query produces: the parsed query and its plan, each arm's hits, the fused ranking with
every arm's share, and the failures. Frozen dataclasses, like the stored values in `types`."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from types import MappingProxyType
from typing import Any

from .enums import StrEnum, member
from .errors import ConfigurationError
from .types import Memory, MemoryType, TimeWindow

__all__ = ["Arm", "ARMS", "Shortcut", "FailureKind", "AMBIGUOUS_BELOW", "EntityCandidate", "EntityRef",
           "ParsedQuery", "QueryPlan", "Hit", "Contribution", "FusedHit", "ArmFailure", "Retrieval"]

class Arm(StrEnum):
    """The five built-in arms (`retrievers.registry` says how each is built and planned)."""

    DENSE = "dense"
    LEXICAL = "lexical"
    GRAPH = "graph"
    TEMPORAL = "temporal"
    TYPE = "type"


#: The five arms' names, in the order explanations list them (plain strings, as callers pass them).
ARMS: tuple[str, ...] = tuple(a.value for a in Arm)


class Shortcut(StrEnum):
    """The plans that need no query embedding (`query.shortcuts`)."""

    TIME = "time"
    IDENTIFIER = "identifier"
    NAME = "name"


class FailureKind(StrEnum):
    """Why an arm's answer is missing or partial (`ArmFailure.kind`)."""

    ERROR = "error"
    TIMEOUT = "timeout"
    #: its hits were left out because their memories could not be read
    HYDRATION = "hydration"
    #: it failed in a plan that needed no query embedding, and the full plan then ran
    SHORTCUT = "shortcut"


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
    #: The temporal parser's rule that read the window (`query.temporal.RULE_NAMES`), None without one.
    temporal_rule: str | None = None
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
    #: An embedding-free plan (`query.shortcuts`): "time" (the window's events newest first),
    #: "identifier" (BM25 alone) or "name" (the graph and BM25). The query is not embedded and no
    #: vector search runs. None: the arms' plan as usual.
    shortcut: str | None = None
    #: The plan the ensemble runs instead when the shortcut's arm fails or finds nothing (no memory
    #: in the window, holding the identifier, or of the names); None for a plan that is not a shortcut.
    fallback: QueryPlan | None = None
    #: The query's window held no memory: the other arms answer, and the memories nearest the window
    #: come first (`ensemble.recency.add_nearness`), a list fused at this weight (times the temporal
    #: arm's base weight). 0: the window, if any, is a filter as usual.
    soft_window: float = 0.0
    #: The id of the rule behind each of `reasons`, one per reason (`query.RULE_NAMES`, stage 2b's,
    #: the caller's and the ensemble's own): what code reads, while `reasons` is what people read.
    reason_rules: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "weights", MappingProxyType(dict(self.weights)))
        object.__setattr__(self, "skipped", MappingProxyType(dict(self.skipped)))
        object.__setattr__(self, "type_hints", frozenset(self.type_hints))
        if self.shortcut is not None:
            object.__setattr__(self, "shortcut", Shortcut(self.shortcut))

    def weight(self, arm: str) -> float:
        return float(self.weights.get(arm, 1.0))

    @property
    def fired(self) -> tuple[str, ...]:
        """The ids of the rules that changed this plan, in order, each once per run of notes."""
        out: list[str] = []
        for rule in self.reason_rules:
            if not out or out[-1] != rule:
                out.append(rule)
        return tuple(out)

    def noted(self, rule: str, line: str, **changes: Any) -> QueryPlan:
        """This plan with `changes` made by `rule`, and `line` (what people read) among its reasons."""
        return replace(self, reasons=(*self.reasons, line), reason_rules=(*self.reason_rules, rule), **changes)

    def without_rule(self, rule: str) -> QueryPlan:
        """This plan with `rule`'s reasons taken out (the change itself is the caller's to undo)."""
        kept = [(r, why) for r, why in zip(self._rules(), self.reasons, strict=True) if r != rule]
        return replace(self, reasons=tuple(w for _, w in kept), reason_rules=tuple(r for r, _ in kept))

    def _rules(self) -> tuple[str, ...]:
        """One rule id per reason (a plan built by hand may give reasons alone: their rule is "")."""
        pad = len(self.reasons) - len(self.reason_rules)
        return (*self.reason_rules, *("",) * pad) if pad > 0 else self.reason_rules[:len(self.reasons)]

    def to_json(self) -> dict[str, Any]:
        """JSON-safe, for traces (`QueryOptimizerChain`'s output) and `Retrieval.to_json()`."""
        return {"arms": list(self.arms), "type_hints": sorted(t.value for t in self.type_hints),
                "weights": dict(self.weights), "max_hops": self.max_hops, "hard_filter": self.hard_filter,
                "reasons": list(self.reasons), "fired": list(self.fired), "skipped": dict(self.skipped),
                "shortcut": self.shortcut,
                "soft_window": self.soft_window}


@dataclass(frozen=True)
class Hit:
    """One arm's answer for one memory: score in [0, 1] (higher is better). `detail` explains the
    score in the arm's own terms (a graph path, the matched window); `memory` is filled when the arm
    already has the payload, which saves a hydration round trip. Inside the ensemble the vector arms
    hand over the raw stored `payload` instead, and only the hits that make the fused top k are
    turned into `Memory` objects (building one per candidate costs CPU for nothing:
    docs/decisions/0016-read-ahead-and-fixed-costs.md)."""

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


def _path(c: Contribution) -> str:
    """The graph's path to the memory and the temporal arm's time ("states Jun 14", "said
    yesterday"), for `explain`; "" for the other arms (their details say how a score was adjusted,
    which the score already shows)."""
    return f": {c.detail}" if c.arm in _TOLD and c.detail else ""


#: The lists whose detail `explain` shows: why the memory is on the list, not how it scored.
_TOLD = frozenset({"graph", "temporal", "near window", "slot"})


@dataclass(frozen=True)
class FusedHit:
    """A memory in the fused ranking, with every arm's share of its score (the recency list's too,
    as "recency"), and what the stage after fusion did to it: the near-duplicates collapsed into it,
    the older versions it supersedes (or the newer one that supersedes it), and the reranker's score
    with the rank the hit had before the reranker reordered the top."""

    memory: Memory
    score: float
    rank: int
    contributions: tuple[Contribution, ...]
    k: int = 60
    #: Ids of the near-duplicates collapsed into this hit, the newest of them (`FusionConfig.collapse`),
    #: best-ranked first. The score and contributions are the best-ranked copy's: it placed the hit.
    collapsed: tuple[str, ...] = ()
    #: Ids of the older memories with this memory's predicate that it outranks (`FusionConfig.supersede`).
    supersedes: tuple[str, ...] = ()
    #: The id of the newer memory with this memory's predicate that outranks it.
    superseded_by: str | None = None
    #: The reranker's score for this hit; None when no reranker ordered it.
    rerank_score: float | None = None
    #: This hit's rank before the reranker reordered the top; None when no reranker ordered it.
    rank_before_rerank: int | None = None
    #: The slot key its versions share ("user manager"; `ensemble.versions`), None when they were
    #: grouped by similarity, or when it has no other version in the result.
    version_slot: str | None = None
    #: How many days older than this memory each of `supersedes` is.
    older_by_days: tuple[float, ...] = ()
    #: What the learned order said of this hit (`fused_memory.ranking.Learned`: its `score`, its
    #: `rrf_rank`, `top()` the features that moved it most); None when RRF's order stood.
    learned: Any = field(default=None, compare=False)

    def explain(self) -> str:
        """e.g. `lexical#1(0.93) + dense#4(0.81) k=10 -> 0.1627 | learned +1.20 (rrf #3; log_len +0.61, ...)
        | rerank 0.912: #4 -> #1`; a graph hit names its path, `graph#1(0.85: Sarah Chen <-reports_to-
        Tom Becker, 1 hop, asked relation)`. Under the learned order the score is the RRF score of the
        place the hit landed at; the arms' terms are what RRF gave it."""
        parts = " + ".join(f"{c.arm}#{c.rank}({c.raw_score:.2f}{_path(c)})" for c in self.contributions)
        out = f"{parts or 'none'} k={self.k} -> {self.score:.4f}"
        if self.learned is not None:
            out += f" | {self.learned.explain()}"
        if self.rerank_score is not None:
            out += f" | rerank {self.rerank_score:.3f}: #{self.rank_before_rerank} -> #{self.rank}"
        how = f"slot: {self.version_slot}" if self.version_slot else "similar text"
        for i, old in enumerate(self.supersedes):
            days = f", {self.older_by_days[i]:g} days older" if i < len(self.older_by_days) else ""
            out += f" | supersedes {old} ({how}{days})"
        if self.superseded_by is not None:
            out += f" | superseded by {self.superseded_by} ({how}, newer)"
        if self.collapsed:
            out += f" | collapsed {', '.join(self.collapsed)} (near-duplicates; the newest shown)"
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "memory": self.memory.to_json(), "score": self.score, "rank": self.rank,
            "explain": self.explain(),
            "contributions": [
                {"arm": c.arm, "rank": c.rank, "raw_score": c.raw_score, "weight": c.weight,
                 "contribution": c.contribution, "detail": c.detail}
                for c in self.contributions
            ],
            "collapsed": list(self.collapsed), "supersedes": list(self.supersedes),
            "superseded_by": self.superseded_by, "rerank_score": self.rerank_score,
            "rank_before_rerank": self.rank_before_rerank,
            "learned_score": self.learned.score if self.learned is not None else None,
        }


@dataclass(frozen=True)
class ArmFailure:
    """An arm that was planned but gave no answer: it raised, or it ran past its timeout; or one
    whose hits were left out because their memories could not be read ("hydration"). A reranker
    that raised, ran past its timeout or answered garbage is named "rerank" (the fused order stands)."""

    arm: str
    reason: str
    #: `FailureKind` ("error", "timeout", "hydration", "shortcut": the arm failed in a plan that needed
    #: no query embedding, and the full plan then ran; its own outcome for the arm is reported beside this).
    kind: str = FailureKind.ERROR

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", member(FailureKind, self.kind, "ArmFailure.kind", ConfigurationError))


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
    #: The reranker that ordered the top hits (`fused_memory.rerank.reranker_name`), None when none did.
    reranked_by: str | None = None

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
        if self.reranked_by is not None:
            lines.append(f"  reranked by {self.reranked_by}")
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
            "reranked_by": self.reranked_by,
        }
