"""The stage after fusion: named steps over one candidate window (`STEPS`), then MMR and the reranker.

    fuse (top W) -> hydrate -> STEPS (window first ... collapse) -> MMR -> rerank (top D) -> top k

All of it works on the fused top W, hydrated (the memories' times, texts and slots are what the
steps read): W is `after_depth`, or `rerank_depth` with a reranker if more (`window`), whatever k
is, so the first answer does not depend on k (docs/decisions/0024-after-fusion-window-and-steps.md);
a k beyond W gets the fused ranking after the window, in its order. Recency orders what the arms
found relevant, it does not bring in what they did not. When collapse leaves the window short, W
doubles and the steps run again, so the window holds distinct memories whenever the arms found that
many. With every step off (recency weight 0, no supersession, no collapse, no MMR, no reranker) the
answer is the fused top k.

A query that one arm answers alone (the caller asked for that arm: `retrieve(arms=["lexical"])`,
the frameworks' single-arm retrievers) gets that arm's ranking: only what the call itself asks for
(`recency=`, `collapse=`, `reranker=`) runs (`SOLO_STEPS`).

Each step is its own module, pure and tested at formula level: `recency` (the recency list,
supersession), `duplicates` (collapse, MMR), `reranking` (the reranker's call and blend). This one
decides which run, reads what they need from the store, and turns the result into `FusedHit`s.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..config import FusionConfig
from ..enums import StrEnum
from ..errors import StoreClosed
from ..query.asked_slot import AskedSlot, asked_slot
from ..query.cues import ANSWER_TIME, asks_past
from ..query.definitions import asked_names, asks_who, defines
from ..query.optimizer import current_state_recency, reaches_now
from ..query.temporal import VAGUE_RULES
from ..rerank import Reranker, reranker_name
from ..results import Arm, ArmFailure, Contribution, FusedHit, Hit, ParsedQuery
from ..text import tokenize
from ..times import MemoryTimes
from .caller_plan import CALLER_ARMS
from .candidate import Candidate
from .duplicates import collapse, mmr
from .fanout import Job, Task
from .fusion import FusedScore, fuse
from .hydration import hydrate
from .recency import about_now, add_nearness, add_recency, contenders
from .reranking import apply_rerank, rerank_task
from .source import EnsembleSource, SlotLookup, VectorLookup
from .versions import Version, order_versions, said_before, slot_of, version_groups

__all__ = ["Staged", "Stage", "Step", "STEPS", "SOLO_STEPS", "staged", "after_fusion", "recency_weight",
           "version_mode", "VersionMode", "window", "COLLAPSE", "SLOT_READ", "ASKED_VERSIONS", "caller_types_only",
           "window_first", "near_window", "asked_versions_read", "find_versions", "recency_list", "versions_ordered",
           "asked_version_first", "definition_first", "collapse_copies"]

#: The name the memories read for the slot a question asks go by in their explanation ("slot#1(1.00:
#: states user manager)"): no arm found them (`asked_versions_read`).
SLOT_READ = "slot"
#: The name a failed read of stored vectors goes by in `Retrieval.failures` (collapse then compares
#: texts only).
COLLAPSE = "collapse"


@dataclass
class Staged:
    """A retrieval between the stage after fusion and its last step, the reranker: the ranked
    candidates, the failures so far, and the rerank task (None: no reranker, or nothing to order)."""

    job: Job
    candidates: list[Candidate]
    failures: list[ArmFailure]
    answered: tuple[str, ...]
    widened: tuple[str, ...]
    pooled: tuple[str, ...]
    rerank: Task | None = None
    reranker: str | None = None

    def hits(self, outcome: object, config: FusionConfig) -> tuple[tuple[FusedHit, ...], str | None]:
        """The final top k, with the rerank task's `outcome` applied ((scores, ms), an exception, or
        None when there was no task); and the name of the reranker that ordered them, if one did."""
        ranked, failure, ms = apply_rerank(self.candidates, self.rerank, outcome, config.rerank_blend, config.k,
                                           self.reranker)
        if failure is not None:
            self.failures.append(failure)
        if ms is not None:
            self.job.timings["rerank"] = ms
        # a hit has something to show for itself: a fused score above 0 (a memory every arm scored 0
        # is the tail of a vector arm's depth, not an answer) and at least the caller's floor
        floor = self.job.after.floor(config.min_score)
        kept = [c for c in ranked if c.score > 0 and c.score >= floor]
        hits = tuple(FusedHit(memory=c.memory, score=c.score, rank=rank, contributions=c.contributions, k=config.k,
                              collapsed=c.collapsed, supersedes=c.supersedes, superseded_by=c.superseded_by,
                              rerank_score=c.rerank_score, rank_before_rerank=c.rank_before_rerank,
                              version_slot=c.version_slot, older_by_days=c.older_by_days, learned=c.learned)
                     for rank, c in enumerate(kept[:self.job.k], start=1))
        return hits, (self.reranker if ms is not None else None)


def recency_weight(job: Job, config: FusionConfig) -> float:
    """The recency list's weight for this query: the caller's; else `current_state_recency` when the
    optimizer found the question about the current state, `recency_weight` otherwise; 0 for one arm
    alone and for a query about the past (`version_mode`: one that names a time before today, asks
    when, or asks for an earlier value)."""
    if job.after.recency is not None:
        return job.after.recency
    if _solo(job) or version_mode(job.parsed) != VersionMode.NOW:
        return 0.0
    if current_state_recency.__name__ in job.plan.fired:
        return config.current_state_recency
    return config.recency_weight


class VersionMode(StrEnum):
    """How the versions of a fact are ordered for a query (`version_mode`)."""

    NOW = "now"
    PAST = "past"


def version_mode(parsed: ParsedQuery) -> VersionMode | None:
    """How the versions of a fact are ordered for this query: "now" (newest first) on a question
    about the present, "past" (the version asked for first) on one about an earlier value
    (`cues.asks_past`, or a window that ended before today), None on a question that asks when
    in the past tense ("when did I move to Munich?": the statement of the move, whichever version
    it is; "when do I go to bed?" asks for the current one). A question in the past tense without
    such a cue ("what did Caroline research?") asks about what happened, not for the current
    value: None."""
    if parsed.answer_type == ANSWER_TIME:  # "when do I go to bed?" asks for the current one
        return VersionMode.NOW if _WHEN_NOW.search(parsed.text) and reaches_now(parsed) else None
    if asks_past(parsed.text) or not reaches_now(parsed):
        return VersionMode.PAST
    if _PAST_TENSE.search(parsed.text):  # "what did Caroline research?": not the current value
        return None
    return VersionMode.NOW if about_now(parsed) else None


_PAST_TENSE = re.compile(r"\b(?:did|was|were|had)\b|n't\s+\w+ed\b", re.IGNORECASE)
_WHEN_NOW = re.compile(r"\bwhen\s+(?:do|does|is|are)\b", re.IGNORECASE)


def _words(text: str) -> frozenset[str]:
    """The question's words as `versions._target` compares them with a version's values: tokenized
    alike on both sides (stemmed: "before James" names the version that says "James")."""
    return frozenset(tokenize(text))


def window(k: int, config: FusionConfig, wide: bool, reranker: Reranker | None) -> int:
    """How many of the fused ranking the steps read: one candidate window that does not depend on
    `k` (docs/decisions/0024-after-fusion-window-and-steps.md): `after_depth`, or `rerank_depth`
    with a reranker if that is more. So the first `j` hits at `k=j` are the first `j` at any larger
    `k`: versions, recency, collapse and the learned order see the same candidates whatever the
    caller asked for; a caller asking for more than the window gets the fused ranking after it
    (`_tail`). `wide` False (one arm alone, no step asked for) reads the arm's top `k` only: there
    is nothing to reorder."""
    if not wide:
        return k
    return max(config.after_depth, config.rerank_depth if reranker is not None else 0)


def _solo(job: Job) -> bool:
    """One arm answers alone because the caller asked for it (`arms=[...]`, the one-arm retrievers):
    then its own order is the answer. A plan left with one arm by the rules (a shortcut, or dense
    alone once a window turned out empty) is the optimizer's choice: the stage runs there, over the
    same candidate window whatever `k` is."""
    return len(job.plan.arms) == 1 and CALLER_ARMS in job.plan.fired


@dataclass
class Stage:
    """One query's candidate window as the steps after fusion see it, and what they decided. Each
    step reads and replaces `ranked` (indices into it are positions in the current order)."""

    job: Job
    config: FusionConfig
    store: EnsembleSource
    read: _VectorRead
    ranked: list[Candidate]
    mode: str | None
    weight: float
    collapsing: bool
    groups: list[Version] = field(default_factory=list)
    #: The slot the question asks (`query.asked_slot`), None when it names none.
    asked: AskedSlot | None = None


Step = Callable[[Stage], None]


def caller_types_only(st: Stage) -> None:
    """The caller's `types=` is a filter: a candidate of another type (a custom arm's, a memory read
    for the asked slot) is no answer."""
    if st.job.types:
        st.ranked = [c for c in st.ranked if c.memory.type in st.job.types]


def window_first(st: Stage) -> None:
    """A question about a time window that holds memories: those with a time inside it (when they
    happened, a time they state, when they were said: `times.MemoryTimes`) come before those
    without, each part in its order. A rule, not a weight: no arm's evidence, nor the learned
    order, puts a memory from outside the window above one inside it. Not for a vague window
    ("recently", "these days": `query.temporal.VAGUE_RULES`), which says what to prefer, not where
    to look: on public LoCoMo "what did Caroline attend recently?" asks about the conversation, and
    held to a recent window it lost gold turns (docs/decisions/0022-temporal-rule-table.md)."""
    parsed = st.job.parsed
    window = parsed.temporal_window
    if window is None or parsed.temporal_rule in VAGUE_RULES or st.job.plan.soft_window \
            or Arm.TEMPORAL not in st.job.plan.arms:
        return
    inside = [MemoryTimes.of(c.memory).match(window) is not None for c in st.ranked]
    if any(inside) and not all(inside):
        st.ranked = [c for c, i in zip(st.ranked, inside, strict=True) if i] + \
                    [c for c, i in zip(st.ranked, inside, strict=True) if not i]


def near_window(st: Stage) -> None:
    """A window that held no memory (`QueryPlan.soft_window`): the memories nearest it first, as a
    list fused at the weight the temporal arm would have had (`recency.add_nearness`)."""
    window, plan = st.job.parsed.temporal_window, st.job.plan
    if window is None or plan.soft_window <= 0:
        return
    weight = float(st.config.weights.get(Arm.TEMPORAL, 1.0)) * plan.soft_window
    st.ranked = add_nearness(st.ranked, window, weight, st.config.k)


#: How many of the newest memories stating the asked slot the stage reads when the arms did not find them.
ASKED_VERSIONS = 12


def asked_versions_read(st: Stage) -> None:
    """A question that names a slot (`query.asked_slot`) sees every version of it: the newest
    memories stating that slot (`SlotLookup`, read by the payload index) that the arms did not find
    join the candidates after them, unscored, so the versions are ordered among themselves ("who
    was my manager before Siddharth?" needs the manager before him, whatever the arms ranked).
    A memory joined this way is shown only where a later step puts it (it takes that place's
    score); a failed read changes nothing."""
    if st.asked is None or not isinstance(st.store, SlotLookup):
        return
    try:
        found = st.store.memories_with_slots(st.job.namespace, sorted(st.asked.keys), ASKED_VERSIONS)
    except StoreClosed:
        raise
    except Exception:  # noqa: BLE001 - the arms' candidates stand without it
        return
    have = {c.memory.id for c in st.ranked}
    for rank, m in enumerate((m for m in found if m.id not in have), start=1):
        key = next(iter(slot_of(m) & st.asked.keys), "")
        st.ranked.append(Candidate(m, 0.0, (Contribution(arm=SLOT_READ, rank=rank, raw_score=1.0, weight=0.0,
                                                             contribution=0.0, detail=f"states {key}"),)))


def find_versions(st: Stage) -> None:
    """The versions of one fact among the candidates (`versions.version_groups`), when a later step
    orders them."""
    if st.mode or st.weight > 0:
        st.groups = version_groups(st.ranked, len(st.ranked))


def recency_list(st: Stage) -> None:
    """The recency list over the versions of the facts the question is about, and only those, fused
    at the query's recency weight (`recency.add_recency`): the groups of the slot it asks, else
    those with a member about as relevant as the best match (`recency.contenders`)."""
    if st.weight <= 0:
        return
    band = set(contenders(st.ranked, st.config.recency_band))
    ids = [[st.ranked[i].memory.id for i in g.members] for g in st.groups
           if (st.asked is not None and g.slot in st.asked.keys) or band.intersection(g.members)]
    members = {m for group in ids for m in group}
    parsed, before = st.job.parsed, list(st.ranked)
    st.ranked = add_recency(st.ranked, st.weight, st.config.k, parsed.now, st.config.recency_half_life_days,
                            among=[i for i, c in enumerate(st.ranked) if c.memory.id in members])
    place = {c.memory.id: i for i, c in enumerate(st.ranked)}
    st.groups = [replace(g, members=tuple(sorted(place[c.memory.id] for c in (before[i] for i in g.members))))
                 for g in st.groups]


def versions_ordered(st: Stage) -> None:
    """The versions of the facts the question is about (`_about`), each in the places they hold:
    newest first on a question about now, the one asked for first on one about the past
    (`versions.order_versions`). The versions of another fact keep their order, and none is
    marked superseded: "who is Gary?" is not about the rent his memory also states."""
    groups = [g for g in st.groups if _about(st, g)] if st.mode is not None else []
    if not groups:
        return
    window = st.job.parsed.temporal_window
    st.ranked = order_versions(st.ranked, groups, past=st.mode == VersionMode.PAST,
                               query_words=_words(st.job.parsed.text), before=window.end if window else None)


def _about(st: Stage, group: Version) -> bool:
    """Whether the question is about the fact `group` holds versions of: it asks that slot
    (`query.asked_slot`), names its attribute ("what's the rent now?"), or asks about the current
    state with no slot named, not who someone is, with a member of the group about as relevant as
    the best match (`recency.contenders`)."""
    if group.slot is None:
        return False
    if st.asked is not None and group.slot in st.asked.keys:
        return True
    attribute = set(tokenize(group.slot)) - {"user"}
    terms = st.job.parsed.terms
    if attribute and all(any(_same_stem(a, t) for t in terms) for a in attribute):
        return True
    if asks_who(st.job.parsed.text) or (st.asked is not None and any(slot_of(c.memory) & st.asked.keys
                                                                      for c in st.ranked)):
        return False  # it asks another slot ("where do I work?" is not about the manager), or who someone is
    if st.mode == VersionMode.NOW:
        return bool(set(contenders(st.ranked, st.config.recency_band)) & set(group.members))
    return False


def _same_stem(a: str, b: str) -> bool:
    """Two stems of one word ("insuranc" / "insur"): equal, or one starts the other (3+ letters)."""
    return a == b or (min(len(a), len(b)) >= 3 and (a.startswith(b) or b.startswith(a)))


def definition_first(st: Stage) -> None:
    """A "who is X?" question (`query.definitions`): the memories that say who X is ("my little
    sister Lena", "Aylin Demir is my manager") come before those that only mention X, each part in
    its order. A question that asks a slot ("who was my manager before James?") asks for a value of
    it, not who the name is: `asked_version_first` answers it."""
    names = asked_names(st.job.parsed)
    if not names or st.asked is not None:
        return
    told = [defines(c.memory.text, names) for c in st.ranked]
    if any(told) and not told[0]:
        st.ranked = [c for c, t in zip(st.ranked, told, strict=True) if t] + \
                    [c for c, t in zip(st.ranked, told, strict=True) if not t]


def asked_version_first(st: Stage) -> None:
    """A question that names the slot of a fact (`query.asked_slot`: "who's my boss now?", "what
    car did I have before the Yaris?") is answered by a memory stating that slot: the first of them
    in the order the versions now stand (the newest, or the one asked for) takes the first place,
    whatever the arms found about the words around it. No memory among the candidates states it:
    the order stands."""
    if st.mode is None or st.asked is None:
        return
    keys = st.asked.keys
    grouped = {i for g in st.groups if g.slot in keys for i in g.members}
    if st.mode == VersionMode.PAST:  # the version asked for: a group's, or a change that says what it was before
        first = next((i for i, c in enumerate(st.ranked) if i in grouped or said_before(c.memory, keys)), None)
    else:
        first = next((i for i, c in enumerate(st.ranked) if i in grouped or slot_of(c.memory) & keys), None)
    if first:
        moved = st.ranked.pop(first)
        st.ranked.insert(0, replace(moved, score=max(moved.score, st.ranked[0].score if st.ranked else 0.0)))


def collapse_copies(st: Stage) -> None:
    """Near-duplicates into one hit, the newest (`duplicates.collapse`)."""
    if st.collapsing:
        st.ranked = collapse(st.ranked, st.read, st.config.duplicate_cosine)


#: The steps after fusion, in order, over one candidate window.
STEPS: tuple[Step, ...] = (window_first, near_window, asked_versions_read, caller_types_only, find_versions,
                           recency_list, versions_ordered, asked_version_first, definition_first, collapse_copies)
#: The steps one arm alone gets (the caller asked for that arm's ranking): the caller's filter, and
#: what the call itself asks for (`recency=`, `collapse=`; each step does nothing unless asked).
SOLO_STEPS: tuple[Step, ...] = (caller_types_only, recency_list, collapse_copies)


def after_fusion(store: EnsembleSource, job: Job, results: Mapping[str, Sequence[Hit]], weights: Mapping[str, float],
                 config: FusionConfig, default: Reranker | None, order: Callable[..., list[FusedScore]] = fuse,
                 trace: Any = None) -> tuple[list[Candidate], list[ArmFailure], Task | None, Reranker | None]:
    """The ranked candidates (up to the window, best first), the failures of reads (hydration, stored
    vectors), the rerank task and the reranker it runs: the call's, else the ensemble's `default`
    (not for one arm alone). `order` ranks the fused candidates (`fuse`'s signature): RRF, or RRF
    followed by the learned order (`ensemble.learned`). The steps (`STEPS`) run over one candidate
    window (`window`); when collapse leaves it short, it reads twice as far and runs them again."""
    solo = _solo(job)
    weight = recency_weight(job, config)
    reranker = job.after.reranker or (None if solo else default)
    collapsing = job.after.collapse if job.after.collapse is not None else (config.collapse and not solo)
    mode = version_mode(job.parsed) if config.supersede and not solo else None
    lam = None if solo else config.mmr_lambda
    wide = not solo or weight > 0 or collapsing or reranker is not None
    asked = asked_slot(job.parsed.text) if mode is not None else None
    base = window(job.k, config, wide, reranker)
    size = base
    failures: list[ArmFailure] = []
    read = _VectorRead(store, job.namespace)
    steps = SOLO_STEPS if solo else STEPS
    # the window is fused from each arm's first `depth` hits whatever `k` is (the arms read deeper
    # only for a `k` beyond it, and that reaches the tail, not the window)
    head = {a: hs[:config.depth] for a, hs in results.items()} if job.k > config.depth else results
    t0 = time.perf_counter()
    while True:
        fused = order(head, weights, config.k, limit=size)
        kept, unread = hydrate(store, job.namespace, head, fused, size,
                               _whole(head, weights, config.k, order), job.ahead)
        failures[:] = unread
        stage = Stage(job, config, store, read, [Candidate(m, f.score, f.contributions) for f, m in kept], mode,
                      weight, collapsing, asked=asked)
        if trace is not None:
            trace.steps.append(("fusion", [c.memory.id for c in stage.ranked]))
        for step in steps:
            step(stage)
            if trace is not None:  # `misses.Trace`: what each step left (`EnsembleMemory.explain_miss`)
                trace.steps.append((step.__name__, [c.memory.id for c in stage.ranked]))
        ranked = stage.ranked
        if not collapsing or len(ranked) >= base or len(fused) < size:
            break
        size *= 2  # copies left fewer than the window: read further down the fused ranking
        if trace is not None:
            trace.steps.clear()
    if lam is not None:
        ranked = mmr(ranked, read([c.memory.id for c in ranked]), lam)
    if wide and len(ranked) < job.k:
        ranked = ranked + _tail(store, job, results, weights, config, order, size, ranked, failures)
    if trace is not None:
        trace.window = list(ranked)
    failures += read.failures
    job.timings["after"] = (time.perf_counter() - t0) * 1000
    task = rerank_task(reranker, job.parsed.text, ranked, config.rerank_depth, config.rerank_timeout_s)
    return ranked, failures, task, reranker


def staged(job: Job, ranked: list[Candidate], failures: list[ArmFailure], answered: Sequence[str],
           widened: Sequence[str], pooled: Sequence[str], task: Task | None, reranker: Reranker | None) -> Staged:
    return Staged(job, ranked, failures, tuple(answered), tuple(widened), tuple(pooled), task,
                  reranker_name(reranker) if reranker is not None else None)


def _tail(store: EnsembleSource, job: Job, results: Mapping[str, Sequence[Hit]], weights: Mapping[str, float],
          config: FusionConfig, order: Callable[..., list[FusedScore]], after: int, ranked: Sequence[Candidate],
          failures: list[ArmFailure]) -> list[Candidate]:
    """What follows the window when the caller asks for more hits than it holds: the fused ranking
    after the `after` candidates the window read, in its order, without the memories already placed
    or collapsed into a hit, of the caller's types. The steps do not reorder it, so no `k` changes
    what comes before it."""
    need = job.k - len(ranked)
    placed = {c.memory.id for c in ranked} | {i for c in ranked for i in c.collapsed}
    fused = [f for f in order(results, weights, config.k, limit=after + need + len(placed))[after:]
             if f.memory_id not in placed]
    kept, unread = hydrate(store, job.namespace, results, fused, len(fused),
                           _whole(results, weights, config.k, order), job.ahead)
    failures += unread
    out = [Candidate(m, f.score, f.contributions) for f, m in kept
           if not job.types or m.type in job.types]
    return out[:need]


def _whole(results: Mapping[str, Sequence[Hit]], weights: Mapping[str, float], k: int,
           order: Callable[..., list[FusedScore]] = fuse) -> Callable[[], list]:
    return lambda: order(results, weights, k)


class _VectorRead:
    """Reads stored vectors for collapse and MMR (`duplicates.VectorRead`); a failed read is recorded
    (once) as the failure of "collapse", whose check then compares texts only, and MMR keeps the
    order."""

    def __init__(self, store: EnsembleSource, namespace: str) -> None:
        self.store, self.namespace = store, namespace
        self.failures: list[ArmFailure] = []
        self._read: dict[str, np.ndarray] = {}  # versions, collapse and MMR may ask for the same ones

    def __call__(self, ids: Sequence[str]) -> Mapping[str, np.ndarray] | None:
        if len(ids) < 2 or not isinstance(self.store, VectorLookup) or self.failures:
            return None
        if all(i in self._read for i in ids):
            return {i: self._read[i] for i in ids}
        try:
            got = self.store.stored_vectors(self.namespace, ids)
            if got:
                self._read.update(got)
            return got
        except StoreClosed:
            raise
        except Exception as exc:  # noqa: BLE001 - a read for this step must not cost the answer
            self.failures.append(ArmFailure(COLLAPSE, f"stored vectors could not be read ({type(exc).__name__}: "
                                                      f"{exc}); near-duplicates by equal text only", "error"))
            return None
