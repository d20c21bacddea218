"""Values a write accepts must read back as written, or be refused: each case here is a value a
write could accept and then change (an id, entities, a session, a time), or one that could leave the
three indexes disagreeing; checked with a canary store (write, reopen, read back)."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from fused_memory.backends.codec import from_payload, to_payload
from fused_memory.ensemble import EnsembleMemory
from fused_memory.errors import InvalidMemory, QueryError
from fused_memory.store.memory_store import MemoryStore
from fused_memory.types import Memory, MemoryType
from fused_memory.validation import FIRST_STORABLE, LAST_STORABLE

from _support import NOW, counts, embedded


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    s = embedded(tmp_path / "s").open()
    yield s
    s.close()


@pytest.mark.parametrize(("given", "stored"), [(0, "0"), (123, "123"), ("m-1", "m-1"), (np.int64(9), "9"),
                                               (uuid.UUID(int=7), str(uuid.UUID(int=7)))])
def test_an_id_is_its_text_for_every_backend(store: MemoryStore, given: object, stored: str) -> None:
    """id=0 is the id "0", not a derived one; delete([123]) removes "123" from every index, not from
    BM25 and the graph only (queries would find the vector point until the next open re-linked it)."""
    store.add(Memory(text="Tom likes zebra stripes", namespace="ns", id=given))
    assert [m.id for m in store.get_many("ns", [stored])] == [stored]
    assert [m.id for m in store.get_many("ns", [given])] == [stored]  # read as add keyed it
    assert [m.id for m in store.get_many("ns", given)] == [stored]  # one id may be given bare
    assert counts(store, "ns") == (1, 1, 1)
    store.delete("ns", given)
    assert counts(store, "ns") == (0, 0, 0)
    assert store.get_many("ns", [stored]) == []


@pytest.mark.parametrize("bad", [False, 1.5, b"m1", ("m", 1)])
def test_an_id_of_another_kind_is_refused(store: MemoryStore, bad: object) -> None:
    with pytest.raises(InvalidMemory, match="memory id must be a string"):
        Memory(text="x", namespace="ns", id=bad)
    with pytest.raises(QueryError, match="memory id must be a string"):
        store.delete("ns", [bad])
    with pytest.raises(QueryError, match="memory id must be a string"):
        store.get_many("ns", [bad])


def test_entities_given_as_one_string_are_refused_not_split_into_letters() -> None:
    with pytest.raises(InvalidMemory, match="not a single string"):
        Memory(text="Tom met Sarah", entities="Tom")  # type: ignore[arg-type]
    with pytest.raises(InvalidMemory, match="list of names"):
        Memory(text="Tom met Sarah", entities=5)  # type: ignore[arg-type]
    assert Memory(text="Tom met Sarah", entities=["Tom"]).entities == ("Tom",)


@pytest.mark.parametrize(("given", "expected"), [("s-1", "s-1"), (42, "42"), (np.int64(42), "42")])
def test_a_session_id_reads_back_as_text(store: MemoryStore, given: object, expected: str) -> None:
    store.add(Memory(text="hello", namespace="ns", id="m", session_id=given))
    assert store.get_many("ns", ["m"])[0].session_id == expected


@pytest.mark.parametrize("bad", [b"abc", 1.5, ["a"], True])
def test_a_session_id_the_payload_would_change_is_refused(bad: object) -> None:
    with pytest.raises(InvalidMemory, match="session_id"):
        Memory(text="hello", namespace="ns", session_id=bad)


@pytest.mark.parametrize(("stored", "read"), [([97, 98, 99], "[97, 98, 99]"), (1.5, "1.5"), (42, "42"),
                                              (True, "True"), ("s" * 20_000, "s" * 20_000)])
def test_a_session_id_written_before_the_check_still_reads_back(stored: object, read: str) -> None:
    """A store written before session ids had to be text keeps its memories readable."""
    payload = to_payload(Memory(text="hello", namespace="ns", id="m"))
    assert from_payload({**payload, "session_id": stored}).session_id == read


@pytest.mark.parametrize("when", [
    datetime(9999, 6, 30, 12, 0, 0, 123457, tzinfo=timezone.utc),
    datetime(1, 1, 2, 0, 0, 0, 123457, tzinfo=timezone.utc),
    datetime(2024, 5, 15, 12, 0, 0, 999999, tzinfo=timezone.utc),
])
def test_times_read_back_to_the_microsecond_at_any_date(tmp_path: Path, when: datetime) -> None:
    """Epoch-second floats are exact only for years ~1700-2240; the ISO text is exact everywhere."""
    s = embedded(tmp_path / "s").open()
    s.add(Memory(text="edge time", namespace="ns", id="m", event_at=when, created_at=when))
    s.close()
    s = embedded(tmp_path / "s").open()
    try:
        m = s.get_many("ns", ["m"])[0]
        assert (m.event_at, m.created_at) == (when, when)
    finally:
        s.close()


def test_a_first_session_end_before_1970_is_kept(store: MemoryStore) -> None:
    early = datetime(1969, 12, 31, tzinfo=timezone.utc)
    store.end_session("ns", at=early)
    assert store.last_session_end("ns") == early
    store.end_session("ns", at=datetime(1950, 1, 1, tzinfo=timezone.utc))  # an earlier end keeps the latest
    assert store.last_session_end("ns") == early


def test_retrieve_reads_one_type_given_as_a_string(store: MemoryStore) -> None:
    store.add(Memory(text="badge 47821", namespace="ns", id="m", type="fact"))
    ens = EnsembleMemory(store)
    try:
        r = ens.retrieve("badge", namespace="ns", types="fact", now=NOW)  # type: ignore[arg-type]
    finally:
        ens.close()
    assert r.plan.type_hints == frozenset({MemoryType.FACT}) and [h.memory.id for h in r.hits] == ["m"]


@pytest.mark.parametrize("bad", [None, "high", [0.5]])
def test_relate_refuses_a_confidence_that_is_not_a_number(store: MemoryStore, bad: object) -> None:
    with pytest.raises(QueryError, match="confidence"):
        store.relate("Tom", "knows", "Sarah", namespace="ns", confidence=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(("event_at", "iso", "read"), [
    (253402300800.0, "9999-12-31T23:59:59.999999+00:00", LAST_STORABLE),
    (253402318799.0, "9999-12-31T23:00:00-05:00", LAST_STORABLE),
    (-62135598600.0, "0001-01-01T00:30:00+01:00", FIRST_STORABLE),
    (253402300800.0, None, LAST_STORABLE),
])
def test_a_time_written_before_the_range_check_reads_back_clamped(event_at: float, iso: str | None,
                                                                  read: datetime) -> None:
    """Such a time once kept its store from opening; it now reads back as the nearer end of the
    range, so the memory (and the store) stays readable."""
    payload = to_payload(Memory(text="hello", namespace="ns", id="m", event_at=NOW))
    got = from_payload({**payload, "event_at": event_at, "event_at_iso": iso}).event_at
    assert got == read
