"""`Memory.expires_at` and `Memory.indexed`, on both vector backends: an expired memory is gone for
every read at once (the engine filters on the payload's expiry) and deleted by the sweep; an
unindexed memory is stored, listed and got, but no arm ever ranks it."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from fused_memory import EnsembleMemory, InvalidMemory, Memory

PAST = datetime.now(timezone.utc) - timedelta(minutes=1)
LATER = datetime.now(timezone.utc) + timedelta(hours=1)


def _ids(hits) -> list[str]:
    return sorted(h.memory.id for h in hits)


def test_an_expired_memory_is_gone_for_every_read_and_swept(store_factory) -> None:
    store = store_factory()
    store.add([Memory("Alice adopted a beagle named Rex", namespace="u", id="live", expires_at=LATER),
               Memory("Alice adopted a beagle named Rex last spring", namespace="u", id="gone", expires_at=PAST),
               Memory("Bob's beagle chews shoes", namespace="only-expired", id="b", expires_at=PAST)])
    ens = EnsembleMemory(store, optimizer=False)
    assert _ids(ens.retrieve("Alice beagle Rex", namespace="u", k=5).hits) == ["live"]
    assert [m.id for m in store.memories("u")] == ["live"]
    assert [m.id for m in store.get_many("u", ["gone", "live"])] == ["live"]
    assert abs(store.get_many("u", ["live"])[0].expires_at - LATER) < timedelta(milliseconds=1)  # an epoch float
    assert store.namespaces() == ["u"]  # a namespace whose memories all expired is not listed
    assert store.count("u") == 2  # still stored until the sweep
    assert store.sweep_expired() == 2
    assert store.count("u") == 1 and store.count("only-expired") == 0
    assert store.sweep_expired() == 0


def test_set_expiry_moves_it_and_skips_what_is_gone(store_factory) -> None:
    store = store_factory()
    store.add([Memory("a note that lapsed", namespace="u", id="n", expires_at=PAST)])
    assert store.get_many("u", ["n"]) == []
    store.set_expiry("u", ["n", "never-there"], LATER)
    assert [m.id for m in store.get_many("u", ["n"])] == ["n"]
    store.set_expiry("u", ["n"], None)
    assert store.get_many("u", ["n"])[0].expires_at is None


def test_an_unindexed_memory_is_listed_but_never_ranked(store_factory) -> None:
    store = store_factory()
    store.add([Memory("Carol prefers green tea in the morning", namespace="u", id="ranked"),
               Memory("Carol prefers green tea in the morning", namespace="u", id="hidden", indexed=False)])
    ens = EnsembleMemory(store, optimizer=False)
    for query in ("Carol green tea", "what does Carol drink in the morning?"):
        hits = ens.retrieve(query, namespace="u", k=5).hits
        assert _ids(hits) == ["ranked"] and all(h.collapsed == () for h in hits)
    assert [hit for hit, _ in store.lexical_search("u", "green tea", 5)] == ["ranked"]
    assert sorted(m.id for m in store.memories("u")) == ["hidden", "ranked"]
    assert store.get_many("u", ["hidden"])[0].indexed is False


def test_putting_an_item_again_unindexed_takes_it_out_of_the_ranking(store_factory) -> None:
    store = store_factory()
    store.add([Memory("Dave's locker code is 4417", namespace="u", id="k")])
    assert [hit for hit, _ in store.lexical_search("u", "locker code", 5)] == ["k"]
    store.add([Memory("Dave's locker code is 4417", namespace="u", id="k", indexed=False)])
    assert store.lexical_search("u", "locker code", 5) == []
    assert EnsembleMemory(store, optimizer=False).retrieve("Dave locker code", namespace="u", k=5).hits == ()


@pytest.mark.parametrize(("field", "value", "message"), [
    ("indexed", "no", "indexed must be True or False"),
    ("expires_at", datetime(2030, 1, 1), "expires_at"),
])
def test_bad_expiry_or_indexed_is_refused(field: str, value: object, message: str) -> None:
    with pytest.raises(InvalidMemory, match=message):
        Memory("x", **{field: value})
