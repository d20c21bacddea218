"""The temporal arm without a query vector: a window's memories, strongest time first, newest first.

A query that is only a time ("what happened yesterday?", "what did I do today?") has nothing for a
query embedding to rank by: its words say "what happened", which every memory matches about
equally. The window is the whole question, so the arm reads the memories with a time inside it
(`times.MemoryTimes`) with ordered payload scans (`backends.protocols.OrderedScan`) and no vector
search, and the query is never embedded (`query.shortcuts`, the "time" plan): first those that
happened or state a time inside the window, newest first, then those only said inside it, newest
first (for "what did I tell you yesterday?", `shapes.spoken`, being said there counts in full).
Three scans, one per kind of time, each ordered by its own field: the window's events by
`event_at`, the memories stating a time in it and those said in it by `created_at`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ..backends.protocols import VectorFilter
from ..errors import BackendError
from ..query.shapes import spoken
from ..results import Hit
from ..times import MemoryTimes, TimeKind
from ..types import TimeWindow
from .base import ArmRequest, dedupe_hits, time_detail

__all__ = ["OrderedSource", "TimeOrderRetriever", "recency_score"]


@runtime_checkable
class OrderedSource(Protocol):
    """Where the arm reads: payloads a filter keeps, in the order of a float payload field (a
    `MemoryStore` whose vector backend is an `OrderedScan`)."""

    def scan_ordered(self, flt: VectorFilter, key: str, limit: int,
                     descending: bool = True) -> Sequence[Mapping[str, Any]]: ...


def recency_score(at: float, window: TimeWindow, floor: float = 0.5) -> float:
    """`floor` + (1 - `floor`) * where `at` falls in the window (1.0 at its end): being in the window
    is half the evidence, as for the windowed temporal arm (`TemporalRetriever`); recency orders the
    rest. A memory only said in the window takes the floor 0.25 and at most 0.5, below every memory
    that happened or states a time there."""
    start, end = window.start.timestamp(), window.end.timestamp()
    share = (at - start) / (end - start) if end > start else 1.0
    top = 1.0 if floor >= 0.5 else 0.5
    return floor + (top - floor) * min(1.0, max(0.0, share))


#: The scans, one per kind of time: (the kinds its filter asks, the field it is ordered by).
_SCANS: tuple[tuple[frozenset[str], str], ...] = (
    (frozenset({"event"}), "event_at"),
    (frozenset({"stated"}), "created_at"),
    (frozenset({"said"}), "created_at"),
)


class TimeOrderRetriever:
    """The window's memories, strongest time first, newest first, at most `request.k`; no window ->
    nothing."""

    name = "temporal"

    def __init__(self, source: object) -> None:
        self.source = source

    def search(self, request: ArmRequest) -> list[Hit]:
        window = request.window
        if window is None or request.k <= 0:
            return []
        if not isinstance(self.source, OrderedSource):
            raise BackendError(f"{type(self.source).__name__} cannot scan memories in time order")
        said_counts = spoken(request.query)
        hits: list[Hit] = []
        for times, key in _SCANS:
            flt = VectorFilter(request.namespace, request.types, time_window=window, times=times)
            for p in self.source.scan_ordered(flt, key, request.k, descending=True):
                if p.get("memory_id") is None:
                    continue
                found = MemoryTimes.of_payload(p).match(window, slack_s=1.0)
                if found is None:
                    continue
                strong = found.kind is not TimeKind.SAID or said_counts
                hits.append(Hit(str(p["memory_id"]), recency_score(found.at, window, 0.5 if strong else 0.25),
                                time_detail(found, request.query.now) + ", newest first", payload=p))
        return dedupe_hits(hits, request.k)
