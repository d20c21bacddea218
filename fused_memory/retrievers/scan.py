"""The temporal arm without a query vector: a window's events newest first.

A query that is only a time ("what happened yesterday?", "anything from last week?") has nothing
for a query embedding to rank by: its words say "what happened", which every event matches about
equally. The window is the whole question, so the arm reads the window's events in `event_at`
order, newest first, with one ordered payload scan (`backends.protocols.OrderedScan`) and no vector
search, and the query is never embedded (`query.shortcuts`, the "time" plan).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ..backends.protocols import VectorFilter
from ..errors import BackendError
from ..results import Hit
from ..types import MemoryType, TimeWindow
from .base import ArmRequest

__all__ = ["OrderedSource", "TimeOrderRetriever", "recency_score"]


@runtime_checkable
class OrderedSource(Protocol):
    """Where the arm reads: payloads a filter keeps, in the order of a float payload field (a
    `MemoryStore` whose vector backend is an `OrderedScan`)."""

    def scan_ordered(self, flt: VectorFilter, key: str, limit: int,
                     descending: bool = True) -> Sequence[Mapping[str, Any]]: ...


def recency_score(at: float, window: TimeWindow) -> float:
    """0.5 + 0.5 * where `at` falls in the window (1.0 at its end): being in the window is half the
    evidence, as for the windowed temporal arm (`TemporalRetriever`); recency orders the rest."""
    start, end = window.start.timestamp(), window.end.timestamp()
    share = (at - start) / (end - start) if end > start else 1.0
    return 0.5 + 0.5 * min(1.0, max(0.0, share))


class TimeOrderRetriever:
    """The window's Event memories, newest first, at most `request.k`; no window -> nothing."""

    name = "temporal"

    def __init__(self, source: object) -> None:
        self.source = source

    def search(self, request: ArmRequest) -> list[Hit]:
        window = request.window
        if window is None or request.k <= 0:
            return []
        if not isinstance(self.source, OrderedSource):
            raise BackendError(f"{type(self.source).__name__} cannot scan memories in time order")
        flt = VectorFilter(request.namespace, frozenset({MemoryType.EVENT}), window)
        payloads = self.source.scan_ordered(flt, "event_at", request.k, descending=True)
        detail = f"in {window}, newest first"
        return [Hit(str(p["memory_id"]), recency_score(float(p["event_at"]), window), detail, payload=p)
                for p in payloads if p.get("memory_id") is not None and p.get("event_at") is not None]
