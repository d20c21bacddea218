"""The units of one query's fan-out, as `EnsembleMemory` builds them in `_prepare` and reads them
back in `_finish`: a task per arm (or per batch of vector arms) and the job that holds them. The
reranker's call after fusion is a task too, run and timed out as an arm's."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import BackendError
from ..results import ArmFailure, Hit, ParsedQuery, QueryPlan
from ..types import Memory, MemoryType
from .options import AfterOptions

__all__ = ["Outcome", "Task", "Job", "checked", "raiser", "failed"]

Outcome = dict[str, tuple[list[Hit], str]]


@dataclass
class Task:
    """One unit of fan-out: runs one or more arms, returns {arm: (hits, how)}; `how` is "" for a
    plain answer, "widened" (type filter dropped, rerun) or "pooled" (read off a broader search).
    The rerank task (`reranking.rerank_task`) returns the reranker's checked scores instead."""

    label: str
    arms: tuple[str, ...]
    timeout_s: float
    fn: Callable[[], Any]


@dataclass
class Job:
    parsed: ParsedQuery
    plan: QueryPlan
    namespace: str
    k: int
    tasks: list[Task]
    started: float
    timings: dict[str, float] = field(default_factory=dict)
    failures: list[ArmFailure] = field(default_factory=list)
    #: The call's options for the stage after fusion (`EnsembleMemory.retrieve` sets them).
    after: AfterOptions = field(default_factory=AfterOptions)
    #: Memories BM25 and the graph read while the query was embedded (`slack`), by id: hydration
    #: takes them before reading the store. Kept beside the hits, not in them, so that what an arm
    #: answered (and the learned order's features of it) does not depend on that timing.
    ahead: dict[str, Memory] = field(default_factory=dict)
    #: The caller's `types=`: only memories of these types are an answer (None: any type).
    types: frozenset[MemoryType] | None = None


def checked(name: str, hits: Any) -> list[Hit]:
    """An arm's answer as fusion needs it; a custom arm that returns something else fails alone,
    inside its task, instead of failing the query in fusion."""
    if isinstance(hits, (str, bytes)) or not isinstance(hits, Sequence) or not all(isinstance(h, Hit) for h in hits):
        raise BackendError(f"arm {name!r} returned {type(hits).__name__}, not a list of Hit")
    return list(hits)


def raiser(exc: Exception) -> Callable[[], Outcome]:
    def run() -> Outcome:
        raise exc
    return run


def failed(task: Task, outcome: Any, note: str = "", kind: str | None = None) -> list[ArmFailure]:
    """The failures a task's outcome stands for, one per arm it ran ([] when it answered): an
    exception it raised or timed out with, or no answer at all. `note` follows the reason; `kind`
    replaces "timeout" / "error" (the reason still names the exception)."""
    if not (isinstance(outcome, BaseException) or outcome is None):
        return []
    kind = kind or ("timeout" if isinstance(outcome, TimeoutError) else "error")
    reason = f"{type(outcome).__name__}: {outcome}" if outcome is not None else "no answer"
    return [ArmFailure(a, reason + note, kind) for a in task.arms]
