"""The planner's entity lookup, bounded by the graph arm's timeout.

Planning reads the namespace's entities (`MemoryStore.entity_matcher`) before any arm runs, and
rebuilds them from the graph backend after a write. On a Bolt server that hangs (not one that is
down: that raises at once) the read blocked `retrieve` outside every arm's timeout, with nothing
reported. A network graph's lookup therefore runs on the ensemble's pool and is waited on for the
graph arm's timeout; past it the query goes on without entities, as with a failed lookup, and the
graph arm is reported timed out. One lookup per namespace is in flight at a time, so a hung server
holds one pool thread, not one per query. The embedded graph is read in place: it cannot hang, and
the hop to a thread would cost every query.
"""

from __future__ import annotations

import concurrent.futures as cf
import math
import threading
import time
from collections.abc import Callable
from typing import Any

from ..errors import BackendError
from ..query.entities import EntityMatcher
from ..results import Arm, ArmFailure, FailureKind
from .source import EnsembleSource

__all__ = ["EntityLookup", "wait_s"]


def wait_s(timeout_s: float) -> float | None:
    """A timeout as `Future.result` and `Condition.wait` take it: an infinite one ("wait", which
    FusionConfig allows) is None; float('inf') overflowed their clocks."""
    return None if math.isinf(timeout_s) else max(0.0, timeout_s)


class EntityLookup:
    """One ensemble's bounded lookups (a copy of the ensemble starts its own).

    A lookup that outlived its timeout is not waited on again: while it is still running, the next
    queries of that namespace go on without entities at once (reported as a graph timeout), as
    `HungArms` does for an arm. A lookup still running after `expire_s` is forgotten and the next
    query asks again (a reply lost on a half-open connection would otherwise pin it for as long as
    the socket lives); `clear()` (the ensemble's `close()`) forgets them all."""

    def __init__(self, expire_s: float = 60.0) -> None:
        self._inflight: dict[str, tuple[cf.Future[Any], float, bool]] = {}  # future, started, timed out
        self._lock = threading.Lock()
        self._expire_s = expire_s

    def __call__(self, store: EnsembleSource, namespace: str, submit: Callable[..., cf.Future[Any]],
                 timeout_s: float) -> tuple[EntityMatcher | None, ArmFailure | None]:
        """(matcher, None), or (None, the graph arm's failure) when the lookup failed or is too slow."""
        try:
            if store.graph is None or not store.graph.remote:
                return store.entity_matcher(namespace), None
            with self._lock:
                fut, started, late = self._inflight.get(namespace, (None, 0.0, False))
                if fut is None or fut.done() or time.monotonic() - started > self._expire_s:
                    fut, started, late = submit(store.entity_matcher, namespace), time.monotonic(), False
                    self._inflight[namespace] = (fut, started, late)
            if late:  # an earlier query already waited its timeout on this very lookup
                raise cf.TimeoutError
            try:
                return fut.result(timeout=wait_s(timeout_s)), None
            except cf.TimeoutError:
                with self._lock:
                    if self._inflight.get(namespace, (None,))[0] is fut:
                        self._inflight[namespace] = (fut, started, True)
                raise
        except cf.TimeoutError:
            return None, ArmFailure(Arm.GRAPH, f"entity lookup: no answer within {timeout_s:.2f}s", FailureKind.TIMEOUT)
        except BackendError as exc:
            return None, ArmFailure(Arm.GRAPH, f"entity lookup failed: {exc}")

    def clear(self) -> None:
        with self._lock:
            self._inflight.clear()
