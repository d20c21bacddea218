"""A memory's times, read one way by every path that asks when a memory was: the temporal arm's
window, the time plan, the stage after fusion (recency, versions, the soft window) and the learned
order's features.

A memory has up to three kinds of time (docs/design.md, "A memory's times"):

* **event** - when it happened (`Memory.event_at`, when the caller knows it);
* **stated** - the times its text states, read at write time relative to when it was said
  (`Memory.stated_times`: "booked the vet for the 14th" said on June 3 states June 14);
* **said** - when it was said (`Memory.created_at`, set by `add` when not given).

A time window matches a memory when any of its times falls inside it (a stated time when it
overlaps the window); an event or stated time inside the window is stronger evidence than a memory
only said inside it ("what did I do today?": what happened today, then what was said today).
`MemoryTimes` reads them from a `Memory` or from a stored payload alike, so a hit an arm carried and
a memory read from the store answer the same.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from .enums import StrEnum
from .types import Memory, TimeWindow

__all__ = ["TimeKind", "TimeMatch", "MemoryTimes", "STATED", "describe_day"]

#: The payload key of the times a memory's text states: a list of {"start", "end"} epoch seconds.
STATED = "stated"
_DAY_S = 86400.0


class TimeKind(StrEnum):
    """Which of a memory's times matched a window, strongest first."""

    EVENT = "event"
    STATED = "stated"
    SAID = "said"


@dataclass(frozen=True)
class TimeMatch:
    """The time of a memory that falls inside a window, and its kind; `at` is its start (epoch
    seconds; a stated time may start before the window it overlaps: then the window's start)."""

    kind: TimeKind
    at: float


@dataclass(frozen=True)
class MemoryTimes:
    """A memory's times as epoch seconds: `event`, `stated` windows (start, end), `said`."""

    event: float | None = None
    stated: tuple[tuple[float, float], ...] = ()
    said: float | None = None

    @classmethod
    def of(cls, memory: Memory) -> MemoryTimes:
        return cls(_ts(memory.event_at), tuple((w.start.timestamp(), w.end.timestamp()) for w in memory.stated_times),
                   _ts(memory.created_at))

    @classmethod
    def of_payload(cls, payload: Mapping[str, Any]) -> MemoryTimes:
        """From a stored payload (`backends.codec.to_payload`); a field it lacks is no time."""
        spans = payload.get(STATED)
        stated: list[tuple[float, float]] = []
        if isinstance(spans, list):
            for span in spans:
                try:
                    stated.append((float(span["start"]), float(span["end"])))
                except (KeyError, TypeError, ValueError):
                    continue
        return cls(_num(payload.get("event_at")), tuple(stated), _num(payload.get("created_at")))

    def match(self, window: TimeWindow, said_counts: bool = True, slack_s: float = 0.0) -> TimeMatch | None:
        """The strongest of this memory's times inside `window` (event, then stated, then said;
        `said_counts` False: event and stated only), or None. `slack_s` widens the window on both
        sides: a check of what an engine's range filter let through (it may read a float one ULP
        off) must not drop a memory on the window's edge."""
        lo, hi = window.start.timestamp() - slack_s, window.end.timestamp() + slack_s
        if self.event is not None and lo <= self.event <= hi:
            return TimeMatch(TimeKind.EVENT, self.event)
        for start, end in self.stated:
            if start <= hi and end >= lo:
                return TimeMatch(TimeKind.STATED, max(start, lo))
        if said_counts and self.said is not None and lo <= self.said <= hi:
            return TimeMatch(TimeKind.SAID, self.said)
        return None

    def distance_days(self, window: TimeWindow) -> float:
        """How far the nearest of this memory's times lies from `window`, in days (0: inside it;
        inf: the memory has no time)."""
        lo, hi = window.start.timestamp(), window.end.timestamp()
        spans = [(t, t) for t in (self.event, self.said) if t is not None] + list(self.stated)
        if not spans:
            return math.inf
        return min(max(0.0, lo - end, start - hi) for start, end in spans) / _DAY_S

    @property
    def when(self) -> float | None:
        """When the memory held: when it happened, else when it was said (recency and versions
        order by it: a later statement tells a later state)."""
        return self.event if self.event is not None else self.said


def describe_day(at: float, now: datetime) -> str:
    """A day as an explanation says it: "today", "yesterday", "tomorrow", else "Jun 23" (with the
    year when it is not now's), in now's zone."""
    zone = now.tzinfo or timezone.utc
    day = datetime.fromtimestamp(at, tz=zone).date()
    today = now.date()
    if day == today:
        return "today"
    if day == today - timedelta(days=1):
        return "yesterday"
    if day == today + timedelta(days=1):
        return "tomorrow"
    text = f"{day:%b} {day.day}"
    return text if day.year == today.year else f"{text} {day.year}"


def _ts(value: datetime | None) -> float | None:
    return value.timestamp() if value is not None else None


def _num(value: Any) -> float | None:
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None
