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
from datetime import timezone
from functools import lru_cache
from typing import Any, Protocol

import numpy as np

from ..query.asked_slot import asked_slot
from ..results import ARMS, Contribution, Hit, ParsedQuery, QueryPlan
from ..times import MemoryTimes, TimeKind

__all__ = ["FEATURE_VERSION", "FEATURE_NAMES", "FEATURE_GROUPS", "COLUMN", "Fused", "candidate_features",
           "speaker_of"]

#: Bumped whenever a feature is added, removed, reordered or computed differently.
FEATURE_VERSION = "candidates-3"

_PER_ARM = ("present", "rrank", "score", "wpresent", "rel")
_TYPES = ("fact", "preference", "event", "entity")

FEATURE_NAMES: tuple[str, ...] = (
    *(f"{arm}_{f}" for arm in ARMS for f in _PER_ARM),
    "fused_rrank", "fused_logrank", "fused_rel", "n_arms",
    "at_hand", "log_len", "has_time", "time_tag", "log_age", *(f"type_{t}" for t in _TYPES),
    "states_time", "is_question",
    "window_x_temporal", "asks_time_x_time_tag", "asks_time_x_has_time", "entities_x_graph",
    "entity_overlap", "type_hint_match",
    "in_window", "in_window_said_only", "window_log_distance",
    "speaker_named", "speaker_share", "next_to_strong", "slot_asked",
)
#: Each feature's column.
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
                                "entities": list(m.entities), "answers": (), "metadata": m.metadata,
                                "context": m.context, "session_id": m.session_id,
                                "stated": [{"start": w.start.timestamp(), "end": w.end.timestamp()}
                                           for w in m.stated_times]}
    return out


def candidate_features(fused: Sequence[Fused], results: Mapping[str, Sequence[Hit]], plan: QueryPlan,
                       parsed: ParsedQuery) -> np.ndarray:
    """One row of `FEATURE_NAMES` per fused candidate, in the order given (float64)."""
    n = len(fused)
    x = np.zeros((n, _WIDTH))
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
    pw = {arm: plan.weight(arm) for arm in ARMS}
    best = {arm: hits[0].score for arm, hits in results.items() if hits and hits[0].score > 0}
    carried = _carried(results, {f.memory_id for f in fused})
    at: list[int] = []  # flat positions and values of the non-zero cells: one numpy write at the end
    val: list[float] = []
    speakers: list[str | None] = []
    for i, f in enumerate(fused):
        base = i * _WIDTH
        for c in f.contributions:
            j = _ARM_COL.get(c.arm)
            if j is None:
                continue
            j += base
            at += (j, j + 1, j + 2, j + 3, j + 4)
            val += (1.0, 1.0 / c.rank, c.raw_score, pw[c.arm], c.raw_score / best.get(c.arm, 1.0))
            if c.arm == "temporal" and window is not None:
                at.append(base + _C_WINDOW_X_TEMPORAL)
                val.append(1.0 / c.rank)
            elif c.arm == "graph" and names:
                at.append(base + _C_ENTITIES_X_GRAPH)
                val.append(1.0)
        p = carried.get(f.memory_id)
        speaker = speaker_of(p) if p is not None else None
        speakers.append(speaker)
        if p is None:
            continue
        _memory_row(at, val, base, p, now, asks_time, hints, names)
        if window is not None:
            times = MemoryTimes.of_payload(p)
            found = times.match(window)
            if found is not None:
                at.append(base + _C_IN_WINDOW)
                val.append(1.0)
                if found.kind is TimeKind.SAID:
                    at.append(base + _C_SAID_ONLY)
                    val.append(1.0)
            at.append(base + _C_WINDOW_DISTANCE)
            val.append(math.log1p(min(times.distance_days(window), 36500.0)))
        if speaker is not None and speaker.split()[0] in query_words:
            at.append(base + _C_SPEAKER_NAMED)
            val.append(1.0)
        if asked_keys and asked_keys.intersection(p.get("slot_keys") or ()):
            at.append(base + _C_SLOT_ASKED)
            val.append(1.0)
    _conversation(at, val, fused, carried, speakers)
    x.flat[at] = val
    ranks = np.arange(1, n + 1, dtype=float)
    x[:, COLUMN["fused_rrank"]] = 1.0 / ranks
    x[:, COLUMN["fused_logrank"]] = np.log(ranks)
    x[:, COLUMN["fused_rel"]] = np.asarray([f.score for f in fused]) / top
    x[:, COLUMN["n_arms"]] = [len(f.contributions) for f in fused]
    return x


#: The columns the loops above write, read once by name (a reordered `FEATURE_NAMES` moves them all).
_WIDTH = len(FEATURE_NAMES)
_ARM_COL = {arm: COLUMN[f"{arm}_present"] for arm in ARMS}
_C_WINDOW_X_TEMPORAL, _C_ENTITIES_X_GRAPH = COLUMN["window_x_temporal"], COLUMN["entities_x_graph"]
_C_IN_WINDOW, _C_SAID_ONLY, _C_WINDOW_DISTANCE = (COLUMN["in_window"], COLUMN["in_window_said_only"],
                                                  COLUMN["window_log_distance"])
_C_SPEAKER_NAMED, _C_SLOT_ASKED = COLUMN["speaker_named"], COLUMN["slot_asked"]
_C_SPEAKER_SHARE, _C_NEXT_TO_STRONG = COLUMN["speaker_share"], COLUMN["next_to_strong"]
_C_AT_HAND, _C_LOG_LEN, _C_HAS_TIME = COLUMN["at_hand"], COLUMN["log_len"], COLUMN["has_time"]
_C_ASKS_X_HAS, _C_TIME_TAG, _C_ASKS_X_TAG = (COLUMN["asks_time_x_has_time"], COLUMN["time_tag"],
                                            COLUMN["asks_time_x_time_tag"])
_C_STATES, _C_QUESTION, _C_LOG_AGE = COLUMN["states_time"], COLUMN["is_question"], COLUMN["log_age"]
_C_TYPE = {t: COLUMN[f"type_{t}"] for t in _TYPES}
_C_HINT_MATCH, _C_OVERLAP = COLUMN["type_hint_match"], COLUMN["entity_overlap"]


def _memory_row(at: list[int], val: list[float], base: int, p: Mapping[str, Any], now: float, asks_time: bool,
                hints: set[str], names: set[str]) -> None:
    """The features read off one carried payload alone."""
    text = str(p.get("text") or "")
    at += (base + _C_AT_HAND, base + _C_LOG_LEN)
    val += (1.0, math.log1p(len(text)))
    when = p.get("event_at")
    if when is not None:
        at.append(base + _C_HAS_TIME)
        val.append(1.0)
        if asks_time:
            at.append(base + _C_ASKS_X_HAS)
            val.append(1.0)
    if "time" in (p.get("answers") or ()):
        at.append(base + _C_TIME_TAG)
        val.append(1.0)
        if asks_time:
            at.append(base + _C_ASKS_X_TAG)
            val.append(1.0)
    if p.get("stated"):
        at.append(base + _C_STATES)
        val.append(1.0)
    if text.rstrip().endswith("?"):
        at.append(base + _C_QUESTION)
        val.append(1.0)
    when = when if when is not None else p.get("created_at")
    if when is not None:
        at.append(base + _C_LOG_AGE)
        val.append(math.log1p(max(0.0, now - float(when)) / 86400.0))
    kind = p.get("type")
    col = _C_TYPE.get(kind or "")
    if col is not None:
        at.append(base + col)
        val.append(1.0)
        if kind in hints:
            at.append(base + _C_HINT_MATCH)
            val.append(1.0)
    if names:
        overlap = sum(1.0 for e in p.get("entities") or () if e.casefold() in names)
        if overlap:
            at.append(base + _C_OVERLAP)
            val.append(overlap)


def _conversation(at: list[int], val: list[float], fused: Sequence[Fused], carried: Mapping[str, Mapping[str, Any]],
                  speakers: Sequence[str | None]) -> None:
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
                at.append(i * _WIDTH + _C_SPEAKER_SHARE)
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
            at.append(i * _WIDTH + _C_NEXT_TO_STRONG)
            val.append(1.0)
