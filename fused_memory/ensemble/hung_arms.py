"""Which arms are still running a call past its timeout, so the ensemble does not call them again.

A Python thread cannot be killed, so an arm that hangs past its timeout keeps its pool thread.
Resubmitting it on every query would fill the pool with hung calls and starve healthy arms; instead,
while an arm's earlier call is still running past its timeout, the arm is not called again and
reports a timeout at once. When the hung call finally returns, the arm is back.
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..results import ArmFailure

__all__ = ["HungArms", "FailureLog"]


class HungArms:
    """The record of hung calls of one ensemble (a copy of the ensemble starts a record of its own)."""

    def __init__(self) -> None:
        self._calls: dict[str, cf.Future[Any]] = {}
        self._lock = threading.Lock()

    def reason(self, arms: Sequence[str], timeout_s: float) -> TimeoutError | None:
        """Why a task running `arms` is not called now, or None when none of them is hung."""
        with self._lock:
            stuck = [a for a in arms if a in self._calls]
        if not stuck:
            return None
        return TimeoutError(f"not called: its previous call is still running past its "
                            f"{timeout_s:.2f}s timeout ({', '.join(stuck)})")

    def timed_out(self, arms: Sequence[str], timeout_s: float, fut: cf.Future[Any]) -> TimeoutError:
        """Record that the call `fut` of `arms` outlived its timeout, until it returns."""
        with self._lock:
            for arm in arms:
                self._calls[arm] = fut

        def release(done: cf.Future[Any]) -> None:
            with self._lock:
                for arm in arms:
                    if self._calls.get(arm) is done:
                        del self._calls[arm]

        fut.add_done_callback(release)
        return TimeoutError(f"no answer within {timeout_s:.2f}s")


class FailureLog:
    """Logs the arms a query answered without, so an operator sees a failing backend somewhere other
    than each hit's metadata. An arm that starts failing is a WARNING; while it keeps failing, one
    WARNING per `every_s` and DEBUG for the rest (a backend down at production rates would flood
    the log); an arm that answers again is forgotten, so its next failure warns at once. No tenant
    (namespace) is logged. One per ensemble, as `HungArms`."""

    def __init__(self, logger: logging.Logger, every_s: float = 60.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._log, self._every_s, self._clock = logger, every_s, clock
        self._warned: dict[str, float] = {}
        self._lock = threading.Lock()

    def report(self, failures: Sequence[ArmFailure], answered: Iterable[str]) -> None:
        now = self._clock()
        failing = {f.arm for f in failures}
        with self._lock:
            for arm in set(answered) - failing:  # a hydration failure names an arm that answered
                self._warned.pop(arm, None)
            loud = [f for f in failures if now - self._warned.get(f.arm, -math.inf) >= self._every_s]
            for f in loud:
                self._warned[f.arm] = now
        quiet = [f for f in failures if f not in loud]
        if loud:
            self._log.warning("arm failures: %s (while they last, at most one warning per arm every %.0f s)",
                              _listed(loud), self._every_s)
        if quiet:
            self._log.debug("arm failures: %s", _listed(quiet))


def _listed(failures: Sequence[ArmFailure]) -> str:
    return "; ".join(f"{f.arm} ({f.kind}: {f.reason})" for f in failures)
