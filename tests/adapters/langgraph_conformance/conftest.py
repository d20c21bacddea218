"""LangGraph's own store tests, run against `FusedMemoryStore` (see `_fused.py` and the README's LangGraph section).

The fast lane (`pytest -m "not slow"`) runs the in-memory store's suite alone of them: the SQLite
and Postgres suites ask the same contract again, with TTL waits and large batches (about 5.5 minutes
of test time). Their files stay as ported; `slow` is added here, and CI runs them all."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ._fused import close_all

#: The one suite of this directory in the fast lane.
FAST_LANE = "test_inmemory_store.py"


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by mark
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if item.path.parent == here and item.path.name != FAST_LANE:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _close_stores() -> Iterator[None]:
    yield
    close_all()
