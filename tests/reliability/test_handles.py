"""A store is a handle to open storage: `close()` gives it up until `open()` takes it again, and a
copy is the same handle (a copy of an ensemble is a new ensemble over it). Before, any call after
`close()` silently reopened the store (taking the files' lock back from whoever the caller had
closed it for), and `copy.deepcopy` or pickling a store, an ensemble or a framework retriever failed
deep inside with "cannot pickle EdgeShard"."""

from __future__ import annotations

import asyncio
import copy
import pickle
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from fused_memory import EnsembleMemory, FusedMemoryError, FusionConfig, Memory, MemoryStore, NotPicklable, StoreClosed
from fused_memory.query.parse import parse_query
from fused_memory.results import EntityCandidate, EntityRef
from fused_memory.retrievers.base import ArmRequest

from _support import NOW, FaultProxy, counts, embedded

NS = "ns"


def _seeded(path: Path) -> MemoryStore:
    store = embedded(path).open()
    store.add([Memory(text="Sarah moved to the Berlin office", namespace=NS, id="m1", entities=("Sarah",)),
               Memory(text="badge ID 4471 opens the lab", namespace=NS, id="m2")])
    return store


def _graph_request() -> ArmRequest:
    parsed = parse_query("Sarah", now=NOW)
    ref = EntityRef("Sarah", (EntityCandidate("sarah", "Sarah", 1.0),))
    return ArmRequest(replace(parsed, entity_refs=(ref,)), NS, 10, max_hops=1)


@pytest.mark.parametrize(("name", "call"), [
    ("count", lambda s, e: s.count(NS)),
    ("get_many", lambda s, e: s.get_many(NS, ["m1"])),
    ("add", lambda s, e: s.add(Memory(text="a new one", namespace=NS))),
    ("delete", lambda s, e: s.delete(NS, ["m1"])),
    ("namespaces", lambda s, e: s.namespaces()),
    ("type_counts", lambda s, e: s.type_counts(NS)),
    ("relate", lambda s, e: s.relate("Sarah", "works_at", "Berlin", namespace=NS)),
    ("end_session", lambda s, e: s.end_session(NS, NOW)),
    ("aadd", lambda s, e: asyncio.run(s.aadd(Memory(text="a new one", namespace=NS)))),
    ("ensemble", lambda s, e: e.retrieve("Berlin", namespace=NS)),
    ("aretrieve", lambda s, e: asyncio.run(e.aretrieve("Berlin", namespace=NS))),
    ("one arm", lambda s, e: e.retrieve("Berlin", namespace=NS, arms=["lexical"])),
    # the arms themselves, called directly: the graph arm works over the graph backend, which
    # would otherwise open itself again on first use
    ("lexical arm", lambda s, e: e.arm("lexical").search(_graph_request())),
    ("graph arm", lambda s, e: e.arm("graph").search(_graph_request())),
])
def test_a_closed_store_raises_instead_of_reopening(tmp_path: Path, name: str, call) -> None:
    store = _seeded(tmp_path / "s")
    ens = EnsembleMemory(store)
    assert [h.memory_id for h in ens.arm("graph").search(_graph_request())] == ["m1"]  # the request finds m1
    store.close()
    with pytest.raises(StoreClosed, match="was closed; call open"):
        call(store, ens)
    assert not store.graph._opened  # the graph was not reopened either
    # Nothing was reopened behind the caller's back: another store can take the files' lock ...
    other = embedded(tmp_path / "s").open()
    assert other.count(NS) == 2  # ... and the refused add / delete changed nothing
    assert other.retriever("graph").search(_graph_request())[0].memory_id == "m1"
    other.close()


def test_open_after_close_reopens_with_everything_kept(tmp_path: Path) -> None:
    store = _seeded(tmp_path / "s")
    store.close()
    assert store.open() is store
    assert sorted(m.id for m in store.get_many(NS, ["m1", "m2"])) == ["m1", "m2"]
    assert [h.memory.id for h in EnsembleMemory(store).retrieve("4471", namespace=NS, k=1).hits] == ["m2"]
    store.close()


def test_a_store_never_opened_still_opens_on_first_use(tmp_path: Path) -> None:
    """Construction does no I/O; the first call opens. Only an explicit close() is final."""
    _seeded(tmp_path / "s").close()
    fresh = embedded(tmp_path / "s")
    assert fresh.count(NS) == 2
    fresh.close()


def test_leaving_a_with_block_closes_the_store_for_good(tmp_path: Path) -> None:
    _seeded(tmp_path / "s").close()
    with embedded(tmp_path / "s") as store:
        ens = EnsembleMemory(store)
        assert ens.retrieve("Berlin", namespace=NS).hits
    with pytest.raises(StoreClosed):
        ens.retrieve("Berlin", namespace=NS)


def test_a_copy_of_a_store_is_the_store_and_a_copy_of_an_ensemble_is_its_own(tmp_path: Path) -> None:
    store = _seeded(tmp_path / "s")
    ens = EnsembleMemory(store, FusionConfig(k=7), optimizer=False)
    assert copy.copy(store) is store and copy.deepcopy(store) is store
    holder = copy.deepcopy({"memory": ens, "k": [5]})  # what a framework's deep copy of its config does
    for twin in (copy.copy(ens), holder["memory"]):
        assert twin is not ens and twin.store is store
        assert (twin.config, twin.optimizer, twin.clock) == (ens.config, ens.optimizer, ens.clock)
        assert twin.retrieve("4471", namespace=NS, k=1).ids() == ["m2"]
        twin.config = FusionConfig(k=3)  # a copy's settings are its own ...
        twin.close()  # ... and so is its thread pool
    assert ens.config.k == 7 and ens.retrieve("4471", namespace=NS, k=1).ids() == ["m2"]
    store.close()


@pytest.mark.parametrize("which", ["store", "ensemble"])
def test_pickling_a_handle_says_what_to_send_instead(tmp_path: Path, which: str) -> None:
    store = _seeded(tmp_path / "s")
    thing = store if which == "store" else EnsembleMemory(store)
    with pytest.raises(NotPicklable, match="cannot be pickled; send its path") as info:
        pickle.dumps(thing)
    assert isinstance(info.value, TypeError) and isinstance(info.value, FusedMemoryError)
    store.close()


def test_close_waits_for_a_write_in_flight_and_the_write_lands_whole(tmp_path: Path) -> None:
    """close() must not release the backends under a running add (its vector write would fail and
    the rollback reopen the graph): it waits for the write's critical section."""
    store = _seeded(tmp_path / "s")
    proxy = FaultProxy(store.vectors).stall("upsert", times=1)
    store.vectors = proxy
    added: list[object] = []
    late = Memory(text="late write", namespace=NS, id="m3")
    writer = threading.Thread(target=lambda: added.append(store.add(late)))
    writer.start()
    t0 = time.monotonic()
    while not proxy.calls.get("upsert") and time.monotonic() - t0 < 30:  # the write is inside its upsert
        time.sleep(0.01)
    closer = threading.Thread(target=store.close)
    closer.start()
    closer.join(0.3)
    assert closer.is_alive()  # waiting for the write, not closing under it
    proxy.release()
    writer.join(30)
    closer.join(30)
    assert added and not writer.is_alive() and not closer.is_alive()
    with pytest.raises(StoreClosed):
        store.add(Memory(text="after close", namespace=NS))
    store.vectors = proxy.inner
    store.open()
    assert counts(store, NS)[:2] == (3, 3) and [m.text for m in store.get_many(NS, ["m3"])] == ["late write"]
    store.close()


def test_the_graph_backend_and_the_ner_pool_stay_closed_with_their_store(tmp_path: Path) -> None:
    """A read that passed the store's check just before close() reached the embedded graph, which
    opened itself again; an add under way started a new NER pool that outlived the store."""
    store = embedded(tmp_path / "s", ner=True).open()
    store.add(Memory(text="Sarah moved to Berlin", namespace=NS, id="m1"))  # starts the NER pool
    graph = store.graph
    assert store._ner_workers is not None
    ner_threads = list(store._ner_workers._threads)  # this store's pool (other tests' stores have theirs)
    store.close()
    for read in (lambda: graph.stats(NS), lambda: graph.entities(NS), store._ner_pool):
        with pytest.raises(StoreClosed):
            read()
    assert not graph._opened
    assert ner_threads and store._ner_workers is None and not any(t.is_alive() for t in ner_threads)
    store.open()  # open() reopens both
    assert graph.stats(NS)["memories"] == 1
    store.close()


def test_a_copy_of_an_ensemble_keeps_its_type_and_what_the_caller_set(tmp_path: Path) -> None:
    class Tuned(EnsembleMemory):
        pass

    store = _seeded(tmp_path / "s")
    ens = Tuned(store, max_workers=3)
    ens.note = "set after construction"  # type: ignore[attr-defined]
    twin = copy.deepcopy(ens)
    assert type(twin) is Tuned and twin.note == "set after construction" and twin._max_workers == 3
    assert twin.retrieve("4471", namespace=NS, k=1).ids() == ["m2"]
    twin.close()
    assert ens.retrieve("4471", namespace=NS, k=1).ids() == ["m2"]
    store.close()


def test_a_read_cut_short_by_close_says_the_store_was_closed(tmp_path: Path) -> None:
    """A get_many under way when close() releases the vector backend says the store was closed,
    not a backend fault ("not open") that the ensemble would report as an arm failure or a partial
    answer."""
    store = _seeded(tmp_path / "s")
    proxy = FaultProxy(store.vectors).stall("get", times=1)
    store.vectors = proxy
    outcome: list[BaseException] = []

    def read() -> None:
        try:
            store.get_many(NS, ["m1"])
        except BaseException as exc:  # noqa: BLE001 - the test inspects it
            outcome.append(exc)

    reader = threading.Thread(target=read)
    reader.start()
    t0 = time.monotonic()
    while not proxy.calls.get("get") and time.monotonic() - t0 < 30:
        time.sleep(0.01)
    store.close()  # the read waits in the proxy, before the backend: the close goes through
    proxy.release()
    reader.join(30)
    assert len(outcome) == 1 and isinstance(outcome[0], StoreClosed)


def test_a_direct_graph_write_racing_close_lands_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The embedded graph's writes checked its state, then took its lock: a close() in between
    dropped the write silently (its commit found no database). They now hold the lock throughout,
    so the close waits and the write is there after a reopen."""
    from fused_memory.backends.graph import embedded as graph_embedded
    from fused_memory.types import EntityMention

    graph = graph_embedded.EmbeddedGraphStore(str(tmp_path / "g"))
    graph.open()
    entered, go = threading.Event(), threading.Event()
    real = graph_embedded.clean_mentions

    def slow(mentions: object) -> object:  # the write is between its check and its commit
        entered.set()
        go.wait(30)
        return real(mentions)

    monkeypatch.setattr(graph_embedded, "clean_mentions", slow)
    writer = threading.Thread(target=graph.link, args=(NS, [("m1", [EntityMention("Sarah", "PERSON")], None)]))
    writer.start()
    assert entered.wait(30)
    closer = threading.Thread(target=graph.close)
    closer.start()
    go.set()
    writer.join(30)
    closer.join(30)
    graph.open()
    assert graph.stats(NS)["memories"] == 1 and graph.mentions_of(NS, "m1") == ["sarah"]
    graph.close()
