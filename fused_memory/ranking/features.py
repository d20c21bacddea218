"""What the learned order reads of each fused candidate: one row of numbers per candidate, each
column named (`FEATURE_NAMES`), computed and read by name (`COLUMN`).

The same function builds the rows at query time and for training (`evaluation.candidates` replays
cached arm lists through it), so a model never sees a feature computed one way in training and
another way in use. Everything comes from what fusion already has in hand: each arm's rank and raw
score (the fused candidate's contributions), the plan's weight for the arm, the fused rank and
score, and the memory's payload when a vector arm carried it (type, text, times, entities, answer
tags, speaker, conversation context, slots). A memory only BM25 or the graph found has no payload at
hand; its memory features are 0 and `at_hand` says so. Reading it from the store would cost a round
trip per query for little.

Query-level cues (a time window, entities found, type hints, "when...?", the speaker a question
names, the slot it asks) move every candidate of a query alike, so they enter only crossed with
what they are about: the window with whether the memory has a time inside it and how far its
nearest time lies, "when...?" with a memory that states a time, entities with the names a memory
shares, a named speaker with the memory's speaker, the asked slot with the memory's slots.

`FEATURE_VERSION` names this list; a model file trained on another list is refused.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timezone
from functools import lru_cache
from typing import Any, Protocol

import numpy as np

from ..query.asked_slot import asked_slot
from ..query.cues import answer_types
from ..query.slots import memory_slots
from ..results import ARMS, Arm, Contribution, Hit, ParsedQuery, QueryPlan
from ..times import MemoryTimes, TimeKind

__all__ = ["FEATURE_VERSION", "FEATURE_NAMES", "FEATURE_GROUPS", "COLUMN", "PER_ARM", "Fused", "candidate_features",
           "feature_names", "arms_of", "speaker_of"]

#: Bumped whenever a feature is added, removed, reordered or computed differently.
FEATURE_VERSION = "candidates-3"

#: The columns each arm has, named "<arm>_<feature>": found by it, 1/rank, raw score, the plan's
#: weight for it when it found the candidate, raw score over its best.
PER_ARM = ("present", "rrank", "score", "wpresent", "rel")
_TYPES = ("fact", "preference", "event", "entity")
#: The columns every candidate has, whatever the arms.
_SHARED: tuple[str, ...] = (
    "fused_rrank", "fused_logrank", "fused_rel", "n_arms",
    "at_hand", "log_len", "has_time", "time_tag", "log_age", *(f"type_{t}" for t in _TYPES),
    "states_time", "is_question",
    "window_x_temporal", "asks_time_x_time_tag", "asks_time_x_has_time", "entities_x_graph",
    "entity_overlap", "type_hint_match",
    "in_window", "in_window_said_only", "window_log_distance",
    "speaker_named", "speaker_share", "next_to_strong", "slot_asked",
)


@lru_cache(maxsize=16)
def feature_names(arms: tuple[str, ...] = ARMS) -> tuple[str, ...]:
    """The feature list for these arms, in order: each arm's `PER_ARM` columns, then the shared ones.
    An arm added to the registry (`retrievers.registry`) gets its own columns; a ranker names the
    arms it was trained with (`Ranker.arms`), and reads exactly those columns."""
    return (*(f"{arm}_{f}" for arm in arms for f in PER_ARM), *_SHARED)


def arms_of(names: Sequence[str]) -> tuple[str, ...] | None:
    """The arms a feature list was built for (`feature_names`), or None when it is not one."""
    head = len(names) - len(_SHARED)
    if head < 0 or head % len(PER_ARM):
        return None
    arms = tuple(str(names[i])[:-len("_present")] for i in range(0, head, len(PER_ARM))
                 if str(names[i]).endswith("_present"))
    return arms if len(arms) * len(PER_ARM) == head and feature_names(arms) == tuple(names) else None


#: The five arms' feature list (the shipped ranker's).
FEATURE_NAMES: tuple[str, ...] = feature_names(ARMS)
#: Each feature's column, for the five arms.
COLUMN: Mapping[str, int] = {name: i for i, name in enumerate(FEATURE_NAMES)}

#: Feature groups, for the ablation (docs/results.md, "The learned order").
FEATURE_GROUPS: Mapping[str, tuple[str, ...]] = {
    "arm evidence": tuple(f"{arm}_{f}" for arm in ARMS for f in ("present", "rrank", "score", "rel")),
    "plan weights": tuple(f"{arm}_wpresent" for arm in ARMS),
    "fused rank and score": ("fused_rrank", "fused_logrank", "fused_rel", "n_arms"),
    "memory": ("at_hand", "log_len", "has_time", "time_tag", "log_age", *(f"type_{t}" for t in _TYPES),
               "states_time", "is_question"),
    "plan cues x candidate": ("window_x_temporal", "asks_time_x_time_tag", "asks_time_x_has_time",
                              "entities_x_graph", "entity_overlap", "type_hint_match"),
    "window": ("in_window", "in_window_said_only", "window_log_distance"),
    "speaker and neighbours": ("speaker_named", "speaker_share", "next_to_strong"),
    "asked slot": ("slot_asked",),
}

#: How many of the fused top count as strong, for `next_to_strong`.
_STRONG = 3
#: A chat turn's speaker label ("Caroline: ...").
_SPEAKER = re.compile(r"^\s*([A-Z][\w'.-]{1,40}(?:\s[A-Z][\w'.-]{1,40})?):\s")
_WORD = re.compile(r"[\w']+")


class Fused(Protocol):
    """A fused candidate as fusion hands it over (`ensemble.fusion.FusedScore`)."""

    @property
    def memory_id(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def contributions(self) -> tuple[Contribution, ...]: ...


def speaker_of(payload: Mapping[str, Any]) -> str | None:
    """Whose turn a memory is: its metadata's `speaker`, else a leading "Name:" label (case-folded)."""
    meta = payload.get("metadata")
    speaker = meta.get("speaker") if isinstance(meta, Mapping) else None
    if isinstance(speaker, str) and speaker:
        return _folded(speaker)
    text = payload.get("text")
    return _label(text) if isinstance(text, str) else None


@lru_cache(maxsize=4096)
def _folded(speaker: str) -> str | None:
    return speaker.strip().casefold() or None


@lru_cache(maxsize=8192)
def _label(text: str) -> str | None:
    m = _SPEAKER.match(text)
    return m.group(1).casefold() if m else None


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
                                "entities": list(m.entities), "answers": answer_types(m.text), "metadata": m.metadata,
                                "slot_keys": [f.key for f in memory_slots(m) if f.key],
                                "context": m.context, "session_id": m.session_id,
                                "stated": [{"start": w.start.timestamp(), "end": w.end.timestamp()}
                                           for w in m.stated_times]}
    return out


def candidate_features(fused: Sequence[Fused], results: Mapping[str, Sequence[Hit]], plan: QueryPlan,
                       parsed: ParsedQuery, arms: tuple[str, ...] = ARMS) -> np.ndarray:
    """One row of `feature_names(arms)` per fused candidate, in the order given (float64). An arm
    outside `arms` adds to the shared columns (fused score, rank, arm count) and has none of its own."""
    n = len(fused)
    L = _layout(arms)
    x = np.zeros((n, L.width))
    if n == 0:
        return x
    top = fused[0].score or 1.0
    now = parsed.now.timestamp() if parsed.now.tzinfo else parsed.now.replace(tzinfo=timezone.utc).timestamp()
    window = parsed.temporal_window
    asks_time = parsed.answer_type == "time"
    names = {c.name.casefold() for ref in parsed.entity_refs for c in ref.candidates[:1]}
    names |= {ref.text.casefold() for ref in parsed.entity_refs}
    query_words = {w.casefold() for w in _WORD.findall(parsed.text)}
    asked = asked_slot(parsed.text)
    asked_keys = asked.keys if asked is not None else frozenset()
    hints = {t.value for t in plan.type_hints}
    pw = {arm: plan.weight(arm) for arm in arms}
    best = {arm: hits[0].score for arm, hits in results.items() if hits and hits[0].score > 0}
    carried = _carried(results, {f.memory_id for f in fused})
    at: list[int] = []  # flat positions and values of the non-zero cells: one numpy write at the end
    val: list[float] = []
    speakers: list[str | None] = []
    for i, f in enumerate(fused):
        base = i * L.width
        for c in f.contributions:
            j = L.arm_col.get(c.arm)
            if j is None:
                continue
            j += base
            at += (j, j + 1, j + 2, j + 3, j + 4)
            val += (1.0, 1.0 / c.rank, c.raw_score, pw[c.arm], c.raw_score / best.get(c.arm, 1.0))
            if c.arm == Arm.TEMPORAL and window is not None:
                at.append(base + L.s + _O_WINDOW_X_TEMPORAL)
                val.append(1.0 / c.rank)
            elif c.arm == Arm.GRAPH and names:
                at.append(base + L.s + _O_ENTITIES_X_GRAPH)
                val.append(1.0)
        p = carried.get(f.memory_id)
        speaker = speaker_of(p) if p is not None else None
        speakers.append(speaker)
        if p is None:
            continue
        _memory_row(L, at, val, base, p, now, asks_time, hints, names)
        if window is not None:
            times = MemoryTimes.of_payload(p)
            found = times.match(window)
            if found is not None:
                at.append(base + L.s + _O_IN_WINDOW)
                val.append(1.0)
                if found.kind is TimeKind.SAID:
                    at.append(base + L.s + _O_IN_WINDOW_SAID_ONLY)
                    val.append(1.0)
            at.append(base + L.s + _O_WINDOW_LOG_DISTANCE)
            val.append(math.log1p(min(times.distance_days(window), 36500.0)))
        if speaker is not None and speaker.split()[0] in query_words:
            at.append(base + L.s + _O_SPEAKER_NAMED)
            val.append(1.0)
        if asked_keys and asked_keys.intersection(p.get("slot_keys") or ()):
            at.append(base + L.s + _O_SLOT_ASKED)
            val.append(1.0)
    _conversation(L, at, val, fused, carried, speakers)
    x.flat[at] = val
    ranks = np.arange(1, n + 1, dtype=float)
    x[:, L.s + _O_FUSED_RRANK] = 1.0 / ranks
    x[:, L.s + _O_FUSED_LOGRANK] = np.log(ranks)
    x[:, L.s + _O_FUSED_REL] = np.asarray([f.score for f in fused]) / top
    x[:, L.s + _O_N_ARMS] = [len(f.contributions) for f in fused]
    return x


@dataclass(frozen=True)
class _Layout:
    """Where each named feature lives for one arm list: the arms' columns first, then the shared
    ones from `s` on. Every write above finds its column by name (`_O_<NAME>`, the name's place in
    the shared list), so a reordered list moves every write with it."""

    width: int
    s: int
    column: Mapping[str, int]
    arm_col: Mapping[str, int]


@lru_cache(maxsize=16)
def _layout(arms: tuple[str, ...]) -> _Layout:
    names = feature_names(arms)
    column = {name: i for i, name in enumerate(names)}
    return _Layout(len(names), len(arms) * len(PER_ARM), column, {arm: column[f"{arm}_present"] for arm in arms})


#: Each shared feature's place among the shared columns, by name.
_O_ASKS_TIME_X_HAS_TIME = _SHARED.index("asks_time_x_has_time")
_O_ASKS_TIME_X_TIME_TAG = _SHARED.index("asks_time_x_time_tag")
_O_AT_HAND = _SHARED.index("at_hand")
_O_ENTITIES_X_GRAPH = _SHARED.index("entities_x_graph")
_O_ENTITY_OVERLAP = _SHARED.index("entity_overlap")
_O_FUSED_LOGRANK = _SHARED.index("fused_logrank")
_O_FUSED_REL = _SHARED.index("fused_rel")
_O_FUSED_RRANK = _SHARED.index("fused_rrank")
_O_HAS_TIME = _SHARED.index("has_time")
_O_IN_WINDOW = _SHARED.index("in_window")
_O_IN_WINDOW_SAID_ONLY = _SHARED.index("in_window_said_only")
_O_IS_QUESTION = _SHARED.index("is_question")
_O_LOG_AGE = _SHARED.index("log_age")
_O_LOG_LEN = _SHARED.index("log_len")
_O_N_ARMS = _SHARED.index("n_arms")
_O_NEXT_TO_STRONG = _SHARED.index("next_to_strong")
_O_SLOT_ASKED = _SHARED.index("slot_asked")
_O_SPEAKER_NAMED = _SHARED.index("speaker_named")
_O_SPEAKER_SHARE = _SHARED.index("speaker_share")
_O_STATES_TIME = _SHARED.index("states_time")
_O_TIME_TAG = _SHARED.index("time_tag")
_O_TYPE_HINT_MATCH = _SHARED.index("type_hint_match")
_O_WINDOW_LOG_DISTANCE = _SHARED.index("window_log_distance")
_O_WINDOW_X_TEMPORAL = _SHARED.index("window_x_temporal")


def _memory_row(L: _Layout, at: list[int], val: list[float], base: int, p: Mapping[str, Any], now: float,
                asks_time: bool, hints: set[str], names: set[str]) -> None:
    """The features read off one carried payload alone."""
    text = str(p.get("text") or "")
    at += (base + L.s + _O_AT_HAND, base + L.s + _O_LOG_LEN)
    val += (1.0, math.log1p(len(text)))
    when = p.get("event_at")
    if when is not None:
        at.append(base + L.s + _O_HAS_TIME)
        val.append(1.0)
        if asks_time:
            at.append(base + L.s + _O_ASKS_TIME_X_HAS_TIME)
            val.append(1.0)
    if "time" in (p.get("answers") or ()):
        at.append(base + L.s + _O_TIME_TAG)
        val.append(1.0)
        if asks_time:
            at.append(base + L.s + _O_ASKS_TIME_X_TIME_TAG)
            val.append(1.0)
    if p.get("stated"):
        at.append(base + L.s + _O_STATES_TIME)
        val.append(1.0)
    if text.rstrip().endswith("?"):
        at.append(base + L.s + _O_IS_QUESTION)
        val.append(1.0)
    when = when if when is not None else p.get("created_at")
    if when is not None:
        at.append(base + L.s + _O_LOG_AGE)
        val.append(math.log1p(max(0.0, now - float(when)) / 86400.0))
    kind = p.get("type")
    col = L.column.get(f"type_{kind}") if kind in _TYPES else None
    if col is not None:
        at.append(base + col)
        val.append(1.0)
        if kind in hints:
            at.append(base + L.s + _O_TYPE_HINT_MATCH)
            val.append(1.0)
    if names:
        overlap = sum(1.0 for e in p.get("entities") or () if e.casefold() in names)
        if overlap:
            at.append(base + L.s + _O_ENTITY_OVERLAP)
            val.append(overlap)


def _conversation(L: _Layout, at: list[int], val: list[float], fused: Sequence[Fused],
                  carried: Mapping[str, Mapping[str, Any]], speakers: Sequence[str | None]) -> None:
    """What a candidate is among the others of its conversation: the share of the candidates whose
    speaker is its speaker (a question about Caroline is answered by Caroline's turns), and whether
    it is a turn next to one of the strongest candidates (its context holds a strong turn's text, or
    a strong turn's context holds its text: the reply, or what was replied to)."""
    known = [s for s in speakers if s is not None]
    if known:
        counts: dict[str, int] = {}
        for who in known:
            counts[who] = counts.get(who, 0) + 1
        for i, speaker in enumerate(speakers):
            if speaker is not None:
                at.append(i * L.width + L.s + _O_SPEAKER_SHARE)
                val.append(counts[speaker] / len(known))
    strong = [p for f in fused[:_STRONG] if (p := carried.get(f.memory_id)) is not None and p.get("session_id")]
    if not strong:
        return  # notes outside a conversation have no neighbours
    sessions = {p["session_id"] for p in strong}
    strong_texts = [t for p in strong if (t := str(p.get("text") or "")[-80:])]
    strong_contexts = [c for p in strong if (c := str(p.get("context") or ""))]
    for i in range(_STRONG, len(fused)):
        p = carried.get(fused[i].memory_id)
        if p is None or p.get("session_id") not in sessions:
            continue
        context, tail = p.get("context") or "", str(p.get("text") or "")[-80:]
        if (context and any(t in context for t in strong_texts)) or (tail and any(tail in c for c in strong_contexts)):
            at.append(i * L.width + L.s + _O_NEXT_TO_STRONG)
            val.append(1.0)
