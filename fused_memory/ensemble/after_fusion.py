"""The stage after fusion: recency, supersession, near-duplicate collapse, MMR, then the reranker.

    fuse (top W) -> hydrate -> + recency list -> supersession -> collapse -> MMR -> rerank (top D) -> top k

All of it works on the fused top W, hydrated (the memories' times, texts and predicates are what
the steps read): W is k, or `after_depth` when the recency list or MMR runs, or `rerank_depth` when
a reranker does (`window`). Recency orders what the arms found relevant, it does not bring in what
they did not. When collapse leaves fewer than k hits, W doubles and the steps run again, so the top
k holds k distinct memories whenever the arms found that many. With every step off (recency weight
0, no supersession, no collapse, no MMR, no reranker) the answer is the fused top k, as before this
stage existed.

A query that one arm answers alone (the caller asked for that arm: `retrieve(arms=["lexical"])`,
the frameworks' single-arm retrievers) gets that arm's ranking: only what the call itself asks for
(`recency=`, `collapse=`, `reranker=`) runs.

Each step is its own module, pure and tested at formula level: `recency` (the recency list,
supersession), `duplicates` (collapse, MMR), `reranking` (the reranker's call and blend). This one
decides which run, reads what they need from the store, and turns the result into `FusedHit`s.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..config import FusionConfig
from ..errors import StoreClosed
from ..query.cues import asks_past
from ..query.optimizer import current_state_recency, fired_rules, reaches_now
from ..rerank import Reranker, reranker_name
from ..results import ArmFailure, FusedHit, Hit, ParsedQuery
from .candidate import Candidate
from .duplicates import collapse, mmr
from .fanout import Job, Task
from .fusion import FusedScore, fuse
from .hydration import hydrate
from .recency import about_now, add_recency, contenders
from .reranking import apply_rerank, rerank_task
from .source import EnsembleSource, VectorLookup
from .versions import named_subject, near_versions, order_versions, version_groups

__all__ = ["Staged", "after_fusion", "recency_weight", "version_mode", "window", "COLLAPSE"]

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
        floor = self.job.after.min_score if self.job.after.min_score is not None else config.min_score
        kept = [c for c in ranked if c.score > 0 and c.score >= floor]
        hits = tuple(FusedHit(c.memory, c.score, rank, c.contributions, config.k, c.collapsed, c.supersedes,
                              c.superseded_by, c.rerank_score, c.rank_before_rerank, c.version_slot,
                              c.older_by_days, c.learned)
                     for rank, c in enumerate(kept[:self.job.k], start=1))
        return hits, (self.reranker if ms is not None else None)


def recency_weight(job: Job, config: FusionConfig) -> float:
    """The recency list's weight for this query: the caller's; else `current_state_recency` when the
    optimizer found the question about the current state, `recency_weight` otherwise; 0 for one arm
    alone and for a query about the past (`version_mode`: one that names a time before today, asks
    when, or asks for an earlier value)."""
    if job.after.recency is not None:
        return job.after.recency
    if _solo(job) or version_mode(job.parsed) != "now":
        return 0.0
    if current_state_recency.__name__ in fired_rules(job.plan):
        return config.current_state_recency
    return config.recency_weight


def version_mode(parsed: ParsedQuery) -> str | None:
    """How the versions of a fact are ordered for this query: "now" (newest first) on a question
    about the present, "past" (the version asked for first) on one about an earlier value
    (`cues.asks_past`, or a window that ended before today), None on a question that asks when
    in the past tense ("when did I move to Munich?": the statement of the move, whichever version
    it is; "when do I go to bed?" asks for the current one). A question in the past tense without
    such a cue ("what did Caroline research?") asks about what happened, not for the current
    value: None."""
    if parsed.answer_type == "time":  # "when do I go to bed?" asks for the current one
        return "now" if _WHEN_NOW.search(parsed.text) and reaches_now(parsed) else None
    if asks_past(parsed.text) or not reaches_now(parsed):
        return "past"
    if _PAST_TENSE.search(parsed.text):  # "what did Caroline research?": not the current value
        return None
    return "now" if about_now(parsed) else None


_PAST_TENSE = re.compile(r"\b(?:did|was|were|had)\b|n't\s+\w+ed\b", re.IGNORECASE)
_WHEN_NOW = re.compile(r"\bwhen\s+(?:do|does|is|are)\b", re.IGNORECASE)


def _words(text: str) -> frozenset[str]:
    return frozenset(w.casefold() for w in re.findall(r"[^\W_]+", text))


def window(k: int, config: FusionConfig, wide: bool, reranker: Reranker | None) -> int:
    """How many of the fused ranking the stage reads: at least `after_depth` when the recency list or
    MMR runs (they choose among more than the top k), `rerank_depth` with a reranker, else k
    (supersession and collapse work on the top k; collapse reads further when copies leave it short).
    A wider window is a wider hydration (the memories no vector arm carried are read from the store),
    so it widens only for a step that needs it."""
    return max(k, config.after_depth if wide else 0, config.rerank_depth if reranker is not None else 0)


def _solo(job: Job) -> bool:
    """One arm answers alone, as the caller asked (`arms=[...]`, the one-arm retrievers): the plan
    always has dense unless the caller left it out. A plan that needs no query embedding may run
    one arm too (`QueryPlan.shortcut`), but that is the optimizer's choice: the stage runs there."""
    return len(job.plan.arms) == 1 and job.plan.shortcut is None


def after_fusion(store: EnsembleSource, job: Job, results: Mapping[str, Sequence[Hit]], weights: Mapping[str, float],
                 config: FusionConfig, default: Reranker | None, order: Callable[..., list[FusedScore]] = fuse
                 ) -> tuple[list[Candidate], list[ArmFailure], Task | None, Reranker | None]:
    """The ranked candidates (up to the window, best first), the failures of reads (hydration, stored
    vectors), the rerank task and the reranker it runs: the call's, else the ensemble's `default`
    (not for one arm alone). `order` ranks the fused candidates (`fuse`'s signature): RRF, or RRF
    followed by the learned order (`ensemble.learned`)."""
    solo = _solo(job)
    weight = recency_weight(job, config)
    reranker = job.after.reranker or (None if solo else default)
    collapsing = job.after.collapse if job.after.collapse is not None else (config.collapse and not solo)
    mode = version_mode(job.parsed) if config.supersede and not solo else None
    lam = None if solo else config.mmr_lambda
    size = window(job.k, config, weight > 0 or lam is not None, reranker)
    failures: list[ArmFailure] = []
    read = _VectorRead(store, job.namespace)
    while True:
        fused = order(results, weights, config.k, limit=size)
        kept, unread = hydrate(store, job.namespace, results, fused, size,
                               _whole(results, weights, config.k, order), job.ahead)
        failures[:] = unread
        t0 = time.perf_counter()
        ranked = [Candidate(m, f.score, f.contributions) for f, m in kept]
        groups = version_groups(ranked, read, config.version_cosine, len(ranked)) if mode or weight > 0 else []
        if weight > 0:  # the recency list holds the memories with another version, and only those
            ids = [[ranked[i].memory.id for i in g.members] for g in groups]
            band = contenders(ranked, config.recency_band)  # about as relevant as the best match
            relevant = set(band)
            members = {m for g, group in zip(groups, ids, strict=True)  # a group with a member there,
                       if relevant.intersection(g.members) for m in group}  # and the near-versions there
            members |= {ranked[i].memory.id for i in near_versions(ranked, band, read, config.version_cosine)}
            ranked = add_recency(ranked, weight, config.k, job.parsed.now, config.recency_half_life_days,
                                 among=[i for i, c in enumerate(ranked) if c.memory.id in members])
            place = {c.memory.id: i for i, c in enumerate(ranked)}
            groups = [replace(g, members=tuple(sorted(place[m] for m in group))) for g, group in zip(groups, ids,
                                                                                                     strict=True)]
        if mode == "now" and weight == 0:
            # not a question about the current state ("apple", "red cars"): versions found by similarity
            # are reordered only when their members name a subject; alike texts of no one naming other
            # values ("red apple", "red car") are no evidence of a change (LangGraph's store tests,
            # docs/architecture.md "Versions of a fact")
            groups = [g for g in groups if g.slot is not None or named_subject(ranked, g)]
        if mode is not None and groups:
            ranked = order_versions(ranked, groups, past=mode == "past", query_words=_words(job.parsed.text),
                                    before=job.parsed.temporal_window.end if job.parsed.temporal_window else None)
        if collapsing:
            ranked = collapse(ranked, read, config.duplicate_cosine)
        if not collapsing or len(ranked) >= job.k or len(fused) < size:
            break
        size *= 2  # copies left fewer than k: read further down the fused ranking
    if lam is not None:
        ranked = mmr(ranked, read([c.memory.id for c in ranked]), lam)
    failures += read.failures
    job.timings["after"] = (time.perf_counter() - t0) * 1000
    task = rerank_task(reranker, job.parsed.text, ranked, config.rerank_depth, config.rerank_timeout_s)
    return ranked, failures, task, reranker


def staged(job: Job, ranked: list[Candidate], failures: list[ArmFailure], answered: Sequence[str],
           widened: Sequence[str], pooled: Sequence[str], task: Task | None, reranker: Reranker | None) -> Staged:
    return Staged(job, ranked, failures, tuple(answered), tuple(widened), tuple(pooled), task,
                  reranker_name(reranker) if reranker is not None else None)


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
