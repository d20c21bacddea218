"""Why a memory was not recalled: for one memory outside a query's top k, what each arm did with it,
where fusion and the learned order placed it, and what each step after fusion did to it.

`EnsembleMemory.explain_miss` runs the query as `retrieve` does (the same plan, the same `now`),
keeping what fusion and the stage after fusion saw (`Trace`), then asks of the memory, arm by arm:
found it (rank, score); skipped by the optimizer (and why); failed; could not have found it (a type
or a time window it is outside of, no time stated for a "when...?", no entity or word in common
with the query); or found others first (below the arm's depth: its own score against the last hit
the arm kept). That costs one read of the memory and, for the dense arm, one read of its stored
vector: one extra lookup per arm at most, and nothing for an arm that found it.

Decisions are data (`MissReason`), and `explain()` turns them into one line each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..enums import StrEnum
from ..query.cues import ANSWER_TIME, TemporalMode, answer_types, temporal_mode
from ..results import ARMS, Arm, ArmFailure, FailureKind, Hit, Retrieval
from ..text import tokenize
from ..times import MemoryTimes, describe_day
from ..types import Memory
from .candidate import Candidate
from .fanout import Job
from .fusion import FusedScore
from .widening import WIDENABLE

__all__ = ["MissReason", "ArmVerdict", "StepMove", "MissExplanation", "Trace", "explain"]


class MissReason(StrEnum):
    """What one arm did with the memory."""

    FOUND = "found"
    SKIPPED = "skipped"
    FAILED = "failed"
    TYPE_FILTERED = "type filtered out"
    OUTSIDE_WINDOW = "outside the window"
    NO_TIME = "states no time"
    NO_ENTITY = "no entity in common"
    NO_WORD = "no word in common"
    BELOW_DEPTH = "below the arm's depth"
    #: the arm returned fewer hits than its depth, and not this memory (a filter or a score of 0 left it out)
    NOT_RETURNED = "not returned"


@dataclass(frozen=True)
class ArmVerdict:
    """One arm and the memory: its rank and score when the arm found it, else why not (`detail`)."""

    arm: str
    reason: MissReason
    rank: int | None = None
    score: float | None = None
    detail: str = ""


@dataclass(frozen=True)
class StepMove:
    """A step after fusion that moved the memory: its place (1-based) in the candidate window
    before and after the step (None: not in the window: a step may bring a memory in, as the
    asked slot's versions are, or leave one out, as the caller's types do)."""

    step: str
    before: int | None
    after: int | None


@dataclass
class Trace:
    """What fusion and the stage after fusion saw for one query (filled by `EnsembleMemory`)."""

    results: dict[str, list[Hit]] = field(default_factory=dict)
    failures: list[ArmFailure] = field(default_factory=list)
    #: Arms whose type filter was dropped for finding too few (`widening`): the filter left nothing out.
    widened: list[str] = field(default_factory=list)
    rrf: list[FusedScore] = field(default_factory=list)
    ordered: list[FusedScore] = field(default_factory=list)
    steps: list[tuple[str, list[str]]] = field(default_factory=list)
    window: list[Candidate] = field(default_factory=list)


@dataclass(frozen=True)
class MissExplanation:
    """Why `memory_id` is (or is not) in the top `k` for `query`."""

    memory_id: str
    query: str
    k: int
    memory: Memory | None
    arms: tuple[ArmVerdict, ...]
    rrf_rank: int | None
    rrf_score: float | None
    order_rank: int | None
    learned: bool
    kth_score: float | None
    moves: tuple[StepMove, ...]
    after: tuple[str, ...]
    final_rank: int | None

    @property
    def recalled(self) -> bool:
        return self.final_rank is not None

    def explain(self) -> str:
        """One line per finding, the arms first."""
        if self.memory is None:
            return f"{self.memory_id}: no such memory in this namespace (or it expired, or is kept out of ranking)"
        lines = [f"{self.memory_id}: {'#' + str(self.final_rank) if self.recalled else 'not'} in the top {self.k} "
                 f"for {self.query!r}"]
        for v in self.arms:
            if v.reason is MissReason.FOUND:
                lines.append(f"  {v.arm}: #{v.rank} ({v.score:.2f})")
            else:
                lines.append(f"  {v.arm}: {v.reason}{': ' + v.detail if v.detail else ''}")
        if self.rrf_rank is None:
            lines.append("  fused: no arm found it, so fusion never ranked it")
        else:
            kth = f", the top {self.k}'s last {self.kth_score:.4f}" if self.kth_score is not None else ""
            lines.append(f"  fused: RRF #{self.rrf_rank} ({self.rrf_score:.4f}{kth})")
            if self.learned:
                lines.append(f"  learned order: #{self.order_rank}" if self.order_rank else
                             "  learned order: below the candidates it reorders")
        for m in self.moves:
            lines.append(f"  {m.step}: {'#' + str(m.before) if m.before else 'not in the window'} -> "
                         f"{'#' + str(m.after) if m.after else 'out of the window'}")
        lines += [f"  {note}" for note in self.after]
        return "\n".join(lines)


def _rank(ids: Sequence[str], memory_id: str) -> int | None:
    try:
        return ids.index(memory_id) + 1
    except ValueError:
        return None


def explain(store: Any, job: Job, trace: Trace, retrieval: Retrieval, memory_id: str, k: int, *,
            arms: Sequence[str] = ARMS, depth: int = 50, floor: float = 0.0) -> MissExplanation:
    """The explanation of `memory_id` for a query `job` ran (see the module docstring). `arms`: every
    arm the ensemble knows (its registry's and its custom ones); `depth`: how many hits each arm was
    asked for; `floor`: the fused score a hit needs (`min_score`)."""
    found = store.get_many(job.namespace, [memory_id])
    memory = found[0] if found else None
    names = [*arms, *(a for a in job.plan.arms if a not in arms)]
    verdicts = tuple(_verdict(store, job, trace, arm, memory, memory_id, depth) for arm in names)
    rrf_ids = [f.memory_id for f in trace.rrf]
    rrf_rank = _rank(rrf_ids, memory_id)
    ordered_ids = [f.memory_id for f in trace.ordered]
    hits = retrieval.hits
    final = _rank([h.memory.id for h in hits], memory_id)
    moves = []
    previous = trace.steps[0][1] if trace.steps else []  # the window as fusion (and the order) left it
    for step, ids in trace.steps[1:]:
        before, after = _rank(previous, memory_id), _rank(ids, memory_id)
        if before != after:
            moves.append(StepMove(step, before, after))
        previous = ids
    return MissExplanation(memory_id, job.parsed.text, k, memory, verdicts, rrf_rank,
                           trace.rrf[rrf_rank - 1].score if rrf_rank else None, _rank(ordered_ids, memory_id),
                           ordered_ids != rrf_ids[:len(ordered_ids)], hits[-1].score if len(hits) >= k else None,
                           tuple(moves), _after(trace.window, memory_id, final, k, floor), final)


def _verdict(store: Any, job: Job, trace: Trace, arm: str, memory: Memory | None, memory_id: str,
             depth: int) -> ArmVerdict:
    plan, parsed = job.plan, job.parsed
    hits = trace.results.get(arm)
    if hits is not None:
        for rank, h in enumerate(_deduped(hits), start=1):
            if h.memory_id == memory_id:
                return ArmVerdict(arm, MissReason.FOUND, rank, h.score)
    # a failure in a plan that needed no embedding is not the full plan's, which ran the arm after it
    failure = next((f for f in trace.failures if f.arm == arm
                    and not (f.kind == FailureKind.SHORTCUT and hits is not None)), None)
    if failure is not None:
        return ArmVerdict(arm, MissReason.FAILED, detail=f"{failure.kind}: {failure.reason}")
    if arm not in plan.arms or hits is None:
        return ArmVerdict(arm, MissReason.SKIPPED, detail=plan.skipped.get(arm, "not planned"))
    if memory is None:
        return ArmVerdict(arm, MissReason.BELOW_DEPTH, detail="not stored")
    wanted = job.types if job.types else (plan.type_hints if arm == Arm.TYPE or (plan.hard_filter and arm in
                                                                               WIDENABLE) else None)
    if wanted and memory.type not in wanted and arm not in trace.widened:
        return ArmVerdict(arm, MissReason.TYPE_FILTERED,
                          detail=f"it is a {memory.type}, the arm keeps {', '.join(sorted(t.value for t in wanted))}")
    kept = _deduped(hits)
    last = kept[-1].score if kept else None
    # below the depth only when the arm filled it; one that found fewer left this memory out
    short = len(hits) < depth
    beyond = MissReason.NOT_RETURNED if short else MissReason.BELOW_DEPTH
    told = (f"the arm kept {len(kept)}" + (f" of the {depth} it was asked for" if short else "")
            + (f", the last at {last:.2f}" if last is not None else ""))
    if arm == Arm.TEMPORAL:
        window = parsed.temporal_window
        if temporal_mode(window, parsed.answer_type) == TemporalMode.WINDOW and window is not None:
            times = MemoryTimes.of(memory)
            if times.match(window) is None:
                told = _times(times, parsed.now)
                return ArmVerdict(arm, MissReason.OUTSIDE_WINDOW, detail=f"{told} outside {window}")
        elif (temporal_mode(window, parsed.answer_type) == TemporalMode.ANSWER
              and ANSWER_TIME not in answer_types(memory.text)):
            return ArmVerdict(arm, MissReason.NO_TIME, detail="a \"when\" question ranks the memories whose text "
                                                              "states a time")
    if arm == Arm.GRAPH:
        names = {n.casefold() for ref in parsed.entity_refs for n in (ref.text, *(c.name for c in ref.candidates))}
        if not names & {e.casefold() for e in memory.entities}:
            said = ", ".join(memory.entities[:4]) or "none"
            return ArmVerdict(arm, MissReason.NO_ENTITY, detail=f"it names {said}; the query names "
                                                                f"{', '.join(r.text for r in parsed.entity_refs)}")
    if arm == Arm.LEXICAL and not set(tokenize(parsed.text)) & set(tokenize(f"{memory.text} {memory.context or ''}")):
        return ArmVerdict(arm, MissReason.NO_WORD, detail="BM25 scores only memories that share a word with the query")
    if arm == Arm.DENSE:
        cosine = _cosine(store, job, memory)
        if cosine is not None:
            return ArmVerdict(arm, beyond, detail=f"its cosine {cosine:.2f}; {told}")
    return ArmVerdict(arm, beyond, detail=told)


def _deduped(hits: Sequence[Hit]) -> list[Hit]:
    seen: set[str] = set()
    out = []
    for h in hits:
        if h.memory_id not in seen:
            seen.add(h.memory_id)
            out.append(h)
    return out


def _times(times: MemoryTimes, now: Any) -> str:
    told = []
    if times.event is not None:
        told.append(f"happened {describe_day(times.event, now)}")
    told += [f"states {describe_day(start, now)}" for start, _ in times.stated[:2]]
    if times.said is not None:
        told.append(f"said {describe_day(times.said, now)}")
    return ", ".join(told) or "no time"


def _cosine(store: Any, job: Job, memory: Memory) -> float | None:
    """The memory's stored vector against the query's embedding (the one extra lookup of the dense
    arm); None when the store cannot hand out vectors."""
    read = getattr(store, "stored_vectors", None)
    if read is None:
        return None
    try:
        vectors = read(job.namespace, [memory.id]) or {}
        if memory.id not in vectors:
            return None
        query = np.asarray(store.embed_query(job.plan.embed_text or job.parsed.text), dtype=np.float32)
        return float(np.dot(query, vectors[memory.id]))
    except Exception:  # noqa: BLE001 - an explanation that cannot read the vector says less, not fails
        return None


def _after(window: Sequence[Candidate], memory_id: str, final: int | None, k: int,
           floor: float = 0.0) -> tuple[str, ...]:
    """What the stage after fusion says of the memory: collapsed into another hit, superseded by a
    newer version, left out for its score (0, or below the caller's floor), or in the window but
    below the top k."""
    notes: list[str] = []
    for c in window:
        if memory_id in c.collapsed:
            notes.append(f"collapsed into {c.memory.id} (a near-duplicate; the newest is shown)")
        if c.memory.id == memory_id and c.superseded_by:
            notes.append(f"superseded by {c.superseded_by} (slot: {c.version_slot})")
        if c.memory.id == memory_id and final is None and c.score <= 0:
            notes.append("its fused score is 0 (no arm scored it above 0): never a hit")
        elif c.memory.id == memory_id and final is None and c.score < floor:
            notes.append(f"its fused score {c.score:.4f} is below the floor (min_score {floor:g})")
    place = _rank([c.memory.id for c in window], memory_id)
    if final is None and place is not None and not notes:
        notes.append(f"#{place} of the candidate window after fusion, below the top {k}")
    return tuple(notes)
