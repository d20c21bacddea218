"""`widening.widened`: the filtered hits first, then the rerun's others capped at the weakest kept
score, at most k; and when an arm widens at all."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from fused_memory.ensemble.widening import NOTHING_KEPT_SCALE, needs_widening, widened
from fused_memory.results import Hit, ParsedQuery
from fused_memory.retrievers.base import ArmRequest
from fused_memory.types import MemoryType

NOW = datetime(2024, 5, 15, 12, 0, tzinfo=timezone.utc)


def test_kept_hits_lead_and_the_rest_is_capped() -> None:
    narrow = [Hit("a", 0.5), Hit("b", 0.3)]
    wide = [Hit("c", 0.9), Hit("a", 0.8), Hit("d", 0.2), Hit("e", 0.4)]
    got = widened(narrow, wide, 4)
    assert [(h.memory_id, h.score) for h in got] == [("a", 0.5), ("b", 0.3), ("c", 0.3), ("d", 0.2)]
    assert got[2].detail == "off-type, widened (own score 0.90)" and got[3].detail is None
    assert [h.memory_id for h in widened(narrow, wide, 2)] == ["a", "b"]


def test_a_guessed_filter_takes_the_rerun_as_it_is() -> None:
    narrow = [Hit("a", 0.5), Hit("b", 0.3)]
    wide = [Hit("c", 0.9), Hit("a", 0.8), Hit("d", 0.2)]
    assert widened(narrow, wide, 2, kept_first=False) == wide[:2]


def test_nothing_kept_keeps_the_reruns_order_at_a_hundredth_of_its_scores() -> None:
    """Its votes shrink by sqrt(0.01): another arm's hit of the forced types then leads."""
    wide = [Hit("c", 0.9), Hit("d", 0.2)]
    got = widened([], wide, 5)
    assert [h.memory_id for h in got] == ["c", "d"]
    assert [h.score for h in got] == pytest.approx([0.9 * NOTHING_KEPT_SCALE, 0.2 * NOTHING_KEPT_SCALE])
    assert NOTHING_KEPT_SCALE == 0.01 and got[0].detail == "off-type, widened (own score 0.90)"


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
