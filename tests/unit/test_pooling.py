"""`backends.vector.pooling`: which searches can be read off which, and how a payload passes a keyword
condition (Qdrant's semantics: a list field matches when any element does). The engines' side of
the same semantics is checked in tests/contract/test_pooled_search.py."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from fused_memory.backends.protocols import VectorFilter, VectorQuery
from fused_memory.backends.vector.common import Between, MatchAnyOf, MatchOne
from fused_memory.backends.vector.pooling import _bases, payload_matches
from fused_memory.config import FusionConfig
from fused_memory.errors import ConfigurationError
from fused_memory.types import MemoryType, TimeWindow

V = (1.0, 0.0)
W = (0.0, 1.0)
T0 = datetime(2024, 5, 1, tzinfo=timezone.utc)


@pytest.mark.parametrize("cond, payload, expected", [
    (MatchOne("answers", "time"), {"answers": ["time"]}, True),
    (MatchOne("answers", "time"), {"answers": ["place", "time"]}, True),
    (MatchOne("answers", "time"), {"answers": []}, False),
    (MatchOne("answers", "time"), {}, False),
    (MatchOne("answers", "time"), {"answers": None}, False),
    (MatchOne("type", "fact"), {"type": "fact"}, True),
    (MatchOne("type", "fact"), {"type": "Fact"}, False),           # exact, like a keyword index
    (MatchAnyOf("type", ("event", "fact")), {"type": "event"}, True),
    (MatchAnyOf("type", ("event", "fact")), {"type": "preference"}, False),
    (MatchAnyOf("type", ("event",)), {"type": None}, False),
    (MatchAnyOf("entities", ("Sarah", "SARAH")), {"entities": ["Berlin", "SARAH"]}, True),
    (MatchAnyOf("entities", ("Sarah",)), {"entities": ["sarah"]}, False),
    (MatchAnyOf("entities", ()), {"entities": ["Sarah"]}, False),  # any of nothing matches nothing
])
def test_payload_matches_a_keyword_condition_as_qdrant_does(cond: Any, payload: dict[str, Any],
                                                            expected: bool) -> None:
    assert payload_matches(cond, payload) is expected


def test_a_range_is_never_checked_in_python() -> None:
    with pytest.raises(TypeError, match="keyword"):
        payload_matches(Between("event_at", 0.0, 1.0), {"event_at": 0.5})


def vq(vec: tuple[float, ...] = V, limit: int = 50, **flt: Any) -> VectorQuery:
    return VectorQuery(vec, VectorFilter("ns", **flt), limit)


EVENTS = frozenset({MemoryType.EVENT})


@pytest.mark.parametrize("queries, expected", [
    # the type arm, the "when" arm and the scoped graph add keyword conditions to dense's search
    ([vq(), vq(types=EVENTS)], {1: 0}),
    ([vq(), vq(answers="time"), vq(entities=("Sarah",))], {1: 0, 2: 0}),
    # a window is a range: always the engine's
    ([vq(), vq(types=EVENTS, event_window=TimeWindow(T0, T0))], {}),
    # another vector, or a deeper limit, cannot be read off
    ([vq(), vq(W, types=EVENTS)], {}),
    ([vq(limit=10), vq(limit=50, types=EVENTS)], {}),
    ([vq(limit=50), vq(limit=10, types=EVENTS)], {1: 0}),
    # a hard-filtered dense is not broader than the "when" arm: each has a condition the other lacks
    ([vq(types=EVENTS), vq(answers="time")], {}),
    # a chain reads off the broadest search, never off another read-off
    ([vq(types=EVENTS), vq(types=EVENTS, answers="time"), vq()], {0: 2, 1: 2}),
    # one search alone, or identical filters, have nothing to read off
    ([vq()], {}),
    ([vq(types=EVENTS), vq(types=EVENTS, limit=10)], {}),
])
def test_which_search_is_read_off_which(queries: list[VectorQuery], expected: dict[int, int]) -> None:
    assert {i: base for i, (base, _) in _bases(queries).items()} == expected


@pytest.mark.parametrize("bad", [-1, 2.5, "10", None])
def test_pool_min_must_be_a_non_negative_integer(bad: Any) -> None:
    with pytest.raises(ConfigurationError, match="pool_min"):
        FusionConfig(pool_min=bad)


def test_pool_min_comes_from_the_environment_and_zero_turns_pooling_off() -> None:
    assert FusionConfig().pool_min == 30
    assert FusionConfig.from_env({"FUSED_MEMORY_POOL_MIN": "0"}).pool_min == 0
    with pytest.raises(ConfigurationError, match="FUSED_MEMORY_"):
        FusionConfig.from_env({"FUSED_MEMORY_POOL_MIN": "many"})
