"""`widening`: when an arm widens (only under the optimizer's type, never the caller's), and what
it keeps: the rerun's list as it is, at most k."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from fused_memory.ensemble.widening import needs_widening, widened
from fused_memory.results import Hit, ParsedQuery
from fused_memory.retrievers.base import ArmRequest
from fused_memory.types import MemoryType

NOW = datetime(2024, 5, 15, 12, 0, tzinfo=timezone.utc)


def test_a_guessed_filter_takes_the_rerun_as_it_is() -> None:
    wide = [Hit("c", 0.9), Hit("a", 0.8), Hit("d", 0.2)]
    assert widened(wide, 2) == wide[:2]


REQ = ArmRequest(query=ParsedQuery(text="q", now=NOW), namespace="ns", k=10)
TYPED = ArmRequest(query=ParsedQuery(text="q", now=NOW), namespace="ns", k=10, types=frozenset({MemoryType.FACT}))


@pytest.mark.parametrize("arm, request_, n, expected", [
    ("dense", TYPED, 4, True),
    ("lexical", TYPED, 4, True),
    ("dense", TYPED, 5, False),      # enough hits
    ("dense", REQ, 0, False),        # no filter to drop
    ("type", TYPED, 0, False),       # the type arm is the filter
    ("graph", TYPED, 0, False),
])
def test_which_arms_widen(arm: str, request_: ArmRequest, n: int, expected: bool) -> None:
    assert needs_widening(arm, request_, [Hit(str(i), 0.5) for i in range(n)], 5) is expected
