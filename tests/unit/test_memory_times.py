"""A memory's times, read one way everywhere (`times.MemoryTimes`): which matched a window
(event, then stated, then said), how far the nearest lies from it, and when the memory held."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from fused_memory.backends.codec import to_payload
from fused_memory.times import MemoryTimes, TimeKind, describe_day
from fused_memory.types import Memory, TimeWindow

UTC = timezone.utc
D = datetime(2026, 6, 10, tzinfo=UTC)


def window(day: datetime) -> TimeWindow:
    return TimeWindow(day, day + timedelta(days=1) - timedelta(microseconds=1))


def test_the_strongest_time_inside_a_window_matches() -> None:
    m = Memory(text="Booked the vet for the 14th.", created_at=D - timedelta(days=7),
               stated_times=(window(D + timedelta(days=4)),))
    times = MemoryTimes.of(m)
    assert times.match(window(D + timedelta(days=4))).kind is TimeKind.STATED
    assert times.match(window(D - timedelta(days=7))).kind is TimeKind.SAID
    assert times.match(window(D - timedelta(days=7)), said_counts=False) is None
    assert times.match(window(D)) is None
    event = Memory(text="x", event_at=D, created_at=D + timedelta(hours=1))
    assert MemoryTimes.of(event).match(TimeWindow(D - timedelta(days=1), D + timedelta(days=1))).kind is TimeKind.EVENT


def test_a_payload_and_its_memory_read_alike() -> None:
    m = Memory(text="x", created_at=D, stated_times=(window(D + timedelta(days=2)),), event_at=D - timedelta(days=1))
    assert MemoryTimes.of_payload(to_payload(m)) == MemoryTimes.of(m)
    assert MemoryTimes.of_payload({"stated": [{"start": "bad"}], "created_at": None}) == MemoryTimes()


def test_distance_to_a_window_and_when_a_memory_held() -> None:
    m = Memory(text="x", created_at=D, stated_times=(window(D + timedelta(days=10)),))
    times = MemoryTimes.of(m)
    assert times.distance_days(window(D + timedelta(days=3))) == 3.0  # from when it was said
    assert times.distance_days(window(D)) == 0.0 and MemoryTimes().distance_days(window(D)) == float("inf")
    assert times.when == D.timestamp()  # said, with no event time


def test_days_read_as_people_say_them() -> None:
    now = datetime(2026, 6, 10, 18, tzinfo=UTC)
    assert [describe_day((now + timedelta(days=d)).timestamp(), now) for d in (-1, 0, 1)] == \
        ["yesterday", "today", "tomorrow"]
    assert describe_day(datetime(2026, 6, 23, tzinfo=UTC).timestamp(), now) == "Jun 23"
    assert describe_day(datetime(2025, 6, 23, tzinfo=UTC).timestamp(), now) == "Jun 23 2025"
