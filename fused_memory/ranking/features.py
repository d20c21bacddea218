"""What the learned order reads of each fused candidate: one row of numbers per candidate.

The same function builds the rows at query time and for training (`evaluation.candidates` replays
cached arm lists through it), so a model never sees a feature computed one way in training and
another way in use. Everything comes from what fusion already has in hand: each arm's rank and raw
score (the fused candidate's contributions), the plan's weight for the arm, the fused rank and
score, and the memory's payload when a vector arm carried it (type, text length, times, entities,
answer tags). A memory only BM25 or the graph found has no payload at hand; its memory features are
0 and `at_hand` says so. Reading it from the store would cost a round trip per query for little.

Query-level cues (a time window, entities found, type hints, "when...?") move every candidate of a
query alike, so they enter only crossed with what they are about: the window with the temporal
arm's rank, "when...?" with a memory that states a time, entities with the names a memory shares.

`FEATURE_VERSION` names this list; a model file trained on another list is refused.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import timezone
from typing import Any, Protocol

import numpy as np

from ..results import ARMS, Contribution, Hit, ParsedQuery, QueryPlan

__all__ = ["FEATURE_VERSION", "FEATURE_NAMES", "FEATURE_GROUPS", "Fused", "candidate_features"]

#: Bumped whenever a feature is added, removed, reordered or computed differently.
FEATURE_VERSION = "candidates-2"

_PER_ARM = ("present", "rrank", "score", "wpresent", "rel")
_TYPES = ("fact", "preference", "event", "entity")

FEATURE_NAMES: tuple[str, ...] = (
    *(f"{arm}_{f}" for arm in ARMS for f in _PER_ARM),
    "fused_rrank", "fused_logrank", "fused_rel", "n_arms",
    "at_hand", "log_len", "has_time", "time_tag", "log_age", *(f"type_{t}" for t in _TYPES),
    "window_x_temporal", "asks_time_x_time_tag", "asks_time_x_has_time", "entities_x_graph",
    "entity_overlap", "type_hint_match",
)

#: Feature groups, for the ablation (docs/architecture.md, "The learned order").
FEATURE_GROUPS: Mapping[str, tuple[str, ...]] = {
    "arm evidence": tuple(f"{arm}_{f}" for arm in ARMS for f in ("present", "rrank", "score", "rel")),
    "plan weights": tuple(f"{arm}_wpresent" for arm in ARMS),
    "fused rank and score": ("fused_rrank", "fused_logrank", "fused_rel", "n_arms"),
    "memory": ("at_hand", "log_len", "has_time", "time_tag", "log_age", *(f"type_{t}" for t in _TYPES)),
    "plan cues x candidate": ("window_x_temporal", "asks_time_x_time_tag", "asks_time_x_has_time",
                              "entities_x_graph", "entity_overlap", "type_hint_match"),
}

_ARM_COL = {arm: i * len(_PER_ARM) for i, arm in enumerate(ARMS)}
_BASE = len(ARMS) * len(_PER_ARM)
_TYPE_COL = {t: _BASE + 9 + i for i, t in enumerate(_TYPES)}
_CUES = _BASE + 13


class Fused(Protocol):
    """A fused candidate as fusion hands it over (`ensemble.fusion.FusedScore`)."""

    @property
    def memory_id(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def contributions(self) -> tuple[Contribution, ...]: ...


def _carried(results: Mapping[str, Sequence[Hit]], wanted: set[str]) -> dict[str, Mapping[str, Any]]:
    """The payloads (or memories, as payload-like dicts) the arms carry for the wanted ids."""
    out: dict[str, Mapping[str, Any]] = {}
    for hits in results.values():
        for h in hits:
            mid = h.memory_id
            if mid in wanted and mid not in out:
                if h.payload is not None:
                    out[mid] = h.payload
                elif h.memory is not None:
                    m = h.memory
                    out[mid] = {"text": m.text, "type": m.type.value if m.type else None,
                                "event_at": m.event_at.timestamp() if m.event_at else None,
                                "created_at": m.created_at.timestamp() if m.created_at else None,
                                "entities": list(m.entities), "answers": ()}
    return out


def candidate_features(fused: Sequence[Fused], results: Mapping[str, Sequence[Hit]], plan: QueryPlan,
                       parsed: ParsedQuery) -> np.ndarray:
    """One row of `FEATURE_NAMES` per fused candidate, in the order given (float64)."""
    n = len(fused)
    x = np.zeros((n, len(FEATURE_NAMES)))
    if n == 0:
        return x
    top = fused[0].score or 1.0
    now = parsed.now.timestamp() if parsed.now.tzinfo else parsed.now.replace(tzinfo=timezone.utc).timestamp()
    window = parsed.temporal_window is not None
    asks_time = parsed.answer_type == "time"
    names = {c.name.casefold() for ref in parsed.entity_refs for c in ref.candidates[:1]}
    names |= {ref.text.casefold() for ref in parsed.entity_refs}
    hints = {t.value for t in plan.type_hints}
    pw = {arm: plan.weight(arm) for arm in ARMS}
    best = {arm: hits[0].score for arm, hits in results.items() if hits and hits[0].score > 0}
    carried = _carried(results, {f.memory_id for f in fused})
    width = len(FEATURE_NAMES)
    at: list[int] = []  # flat positions and values of the non-zero cells: one numpy write at the end
    val: list[float] = []
    fused_scores: list[float] = []
    n_arms: list[float] = []
    temporal, graph = _ARM_COL["temporal"], _ARM_COL["graph"]
    for i, f in enumerate(fused):
        base = i * width
        for c in f.contributions:
            col = _ARM_COL.get(c.arm)
            if col is None:
                continue
            j = base + col
            at += (j, j + 1, j + 2, j + 3, j + 4)
            val += (1.0, 1.0 / c.rank, c.raw_score, pw[c.arm], c.raw_score / best.get(c.arm, 1.0))
            if col == temporal and window:
                at.append(base + _CUES)
                val.append(1.0 / c.rank)
            elif col == graph and names:
                at.append(base + _CUES + 3)
                val.append(1.0)
        fused_scores.append(f.score)
        n_arms.append(len(f.contributions))
        p = carried.get(f.memory_id)
        if p is None:
            continue
        when = p.get("event_at")
        tagged = "time" in (p.get("answers") or ())
        at += (base + _BASE + 4, base + _BASE + 5)
        val += (1.0, math.log1p(len(p.get("text") or "")))
        if when is not None:
            at.append(base + _BASE + 6)
            val.append(1.0)
            if asks_time:
                at.append(base + _CUES + 2)
                val.append(1.0)
        if tagged:
            at.append(base + _BASE + 7)
            val.append(1.0)
            if asks_time:
                at.append(base + _CUES + 1)
                val.append(1.0)
        when = when if when is not None else p.get("created_at")
        if when is not None:
            at.append(base + _BASE + 8)
            val.append(math.log1p(max(0.0, now - float(when)) / 86400.0))
        kind = p.get("type")
        col = _TYPE_COL.get(kind or "")
        if col is not None:
            at.append(base + col)
            val.append(1.0)
            if kind in hints:
                at.append(base + _CUES + 5)
                val.append(1.0)
        if names:
            overlap = sum(1.0 for e in p.get("entities") or () if e.casefold() in names)
            if overlap:
                at.append(base + _CUES + 4)
                val.append(overlap)
    x.flat[at] = val
    ranks = np.arange(1, n + 1, dtype=float)
    x[:, _BASE] = 1.0 / ranks
    x[:, _BASE + 1] = np.log(ranks)
    x[:, _BASE + 2] = np.asarray(fused_scores) / top
    x[:, _BASE + 3] = n_arms
    return x
