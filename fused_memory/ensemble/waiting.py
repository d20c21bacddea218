"""Waiting on one round of tasks, the same way on threads and on the event loop.

`EnsembleMemory.retrieve` and `aretrieve` run the same tasks on the same pool; they differ only in
how they wait. A query may need two rounds (a plan that needs no embedding, then its fallback:
`plans.missed`), so the waiting is its own step. A task whose arm is stuck from an earlier query is
not started (`stuck`), one that outlives its timeout is recorded (`timed_out`), and an exception is
kept as that task's outcome: one arm's fault never fails the round.
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import time
from collections.abc import Callable, Sequence
from typing import Any

from .fanout import Task
from .lookup import wait_s

__all__ = ["wait_all", "await_all"]

Submit = Callable[[Task], "cf.Future[Any]"]
Stuck = Callable[[Task], "TimeoutError | None"]
TimedOut = Callable[[Task, "cf.Future[Any]"], TimeoutError]


def wait_all(tasks: Sequence[Task], submit: Submit, stuck: Stuck, timed_out: TimedOut) -> dict[str, Any]:
    """Start every task, then wait for each within its timeout: outcomes (or exceptions) by label."""
    outcomes: dict[str, Any] = {}
    running: list[tuple[Task, float, cf.Future[Any]]] = []
    for task in tasks:
        if (reason := stuck(task)) is not None:
            outcomes[task.label] = reason
        else:
            running.append((task, time.perf_counter(), submit(task)))
    for task, t0, fut in running:
        remaining = task.timeout_s - (time.perf_counter() - t0)
        try:
            outcomes[task.label] = fut.result(timeout=wait_s(remaining))
        except cf.TimeoutError:
            outcomes[task.label] = timed_out(task, fut)
        except Exception as exc:  # noqa: BLE001 - fault isolation is the point
            outcomes[task.label] = exc
    return outcomes


async def await_all(tasks: Sequence[Task], submit: Submit, stuck: Stuck, timed_out: TimedOut) -> dict[str, Any]:
    """`wait_all` for asyncio: the same tasks on the same pool, awaited."""
    async def run(task: Task) -> Any:
        if (reason := stuck(task)) is not None:
            return reason
        fut = submit(task)
        try:
            return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(fut)), task.timeout_s)
        except asyncio.TimeoutError:
            return timed_out(task, fut)
        except Exception as exc:  # noqa: BLE001
            return exc

    results = await asyncio.gather(*(run(t) for t in tasks))
    return {t.label: r for t, r in zip(tasks, results, strict=True)}
