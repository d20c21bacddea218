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
FEATURE_VERSION = "candidates-1"

_PER_ARM = ("present", "rrank", "score", "wpresent")
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
    "arm evidence": tuple(f"{arm}_{f}" for arm in ARMS for f in ("present", "rrank", "score")),
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
    carried = _carried(results, {f.memory_id for f in fused})
    rows: list[list[float]] = []
    for i, f in enumerate(fused):
        row = [0.0] * len(FEATURE_NAMES)
        for c in f.contributions:
            col = _ARM_COL.get(c.arm)
            if col is None:
                continue
            row[col] = 1.0
            row[col + 1] = 1.0 / c.rank
            row[col + 2] = c.raw_score
            row[col + 3] = pw[c.arm]
        rank = i + 1
        row[_BASE] = 1.0 / rank
        row[_BASE + 1] = math.log(rank)
        row[_BASE + 2] = f.score / top
        row[_BASE + 3] = float(len(f.contributions))
        p = carried.get(f.memory_id)
        time_tag = has_time = overlap = 0.0
        if p is not None:
            row[_BASE + 4] = 1.0
            row[_BASE + 5] = math.log1p(len(p.get("text") or ""))
            at = p.get("event_at")
            has_time = 1.0 if at is not None else 0.0
            row[_BASE + 6] = has_time
            time_tag = 1.0 if "time" in (p.get("answers") or ()) else 0.0
            row[_BASE + 7] = time_tag
            when = at if at is not None else p.get("created_at")
            if when is not None:
                row[_BASE + 8] = math.log1p(max(0.0, now - float(when)) / 86400.0)
            col = _TYPE_COL.get(p.get("type") or "")
            if col is not None:
                row[col] = 1.0
                if p.get("type") in hints:
                    row[_CUES + 5] = 1.0
            if names:
                overlap = sum(1.0 for e in p.get("entities") or () if e.casefold() in names)
        graph = row[_ARM_COL["graph"]]
        row[_CUES] = row[_ARM_COL["temporal"] + 1] if window else 0.0
        row[_CUES + 1] = time_tag if asks_time else 0.0
        row[_CUES + 2] = has_time if asks_time else 0.0
        row[_CUES + 3] = graph if names else 0.0
        row[_CUES + 4] = overlap
        rows.append(row)
    x[:] = rows
    return x
