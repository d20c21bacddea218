"""LangGraph's own store tests, run against `FusedMemoryStore` (see `_fused.py` and README.md here)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ._fused import close_all


@pytest.fixture(autouse=True)
def _close_stores() -> Iterator[None]:
    yield
    close_all()
