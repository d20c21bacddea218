"""A store is a handle to open storage: `close()` gives it up until `open()` takes it again, and a
copy is the same handle. Before, any call after `close()` silently reopened the store (taking the
files' lock back from whoever the caller had closed it for), and `copy.deepcopy` or pickling a store,
an ensemble or a framework retriever failed deep inside with "cannot pickle EdgeShard"."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import pytest
from _support import embedded

from fused_memory import EnsembleMemory, FusedMemoryError, Memory, MemoryStore, NotPicklable, StoreClosed

NS = "ns"


def _seeded(path: Path) -> MemoryStore:
    store = embedded(path).open()
    store.add([Memory(text="Sarah moved to the Berlin office", namespace=NS, id="m1"),
               Memory(text="badge ID 4471 opens the lab", namespace=NS, id="m2")])
    return store


@pytest.mark.parametrize(("name", "call"), [
    ("count", lambda s, e: s.count(NS)),
    ("get_many", lambda s, e: s.get_many(NS, ["m1"])),
    ("add", lambda s, e: s.add(Memory(text="a new one", namespace=NS))),
    ("delete", lambda s, e: s.delete(NS, ["m1"])),
    ("namespaces", lambda s, e: s.namespaces()),
    ("ensemble", lambda s, e: e.retrieve("Berlin", namespace=NS)),
    ("one arm", lambda s, e: e.retrieve("Berlin", namespace=NS, arms=["lexical"])),
])
def test_a_closed_store_raises_instead_of_reopening(tmp_path: Path, name: str, call) -> None:
    store = _seeded(tmp_path / "s")
    ens = EnsembleMemory(store)
    store.close()
    with pytest.raises(StoreClosed, match="was closed; call open"):
        call(store, ens)
    # Nothing was reopened behind the caller's back: another store can take the files' lock ...
    other = embedded(tmp_path / "s").open()
    assert other.count(NS) == 2  # ... and the refused add / delete changed nothing
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


def test_copies_of_a_store_or_an_ensemble_are_the_same_handle(tmp_path: Path) -> None:
    store = _seeded(tmp_path / "s")
    ens = EnsembleMemory(store)
    for thing in (store, ens):
        assert copy.copy(thing) is thing
        assert copy.deepcopy(thing) is thing
    holder = copy.deepcopy({"memory": ens, "k": [5]})  # what a framework's deep copy of its config does
    assert holder["memory"] is ens and holder["memory"].store is store
    assert [h.memory.id for h in holder["memory"].retrieve("4471", namespace=NS, k=1).hits] == ["m2"]
    store.close()


@pytest.mark.parametrize("which", ["store", "ensemble"])
def test_pickling_a_handle_says_what_to_send_instead(tmp_path: Path, which: str) -> None:
    store = _seeded(tmp_path / "s")
    thing = store if which == "store" else EnsembleMemory(store)
    with pytest.raises(NotPicklable, match="cannot be pickled; send its path") as info:
        pickle.dumps(thing)
    assert isinstance(info.value, TypeError) and isinstance(info.value, FusedMemoryError)
    store.close()
