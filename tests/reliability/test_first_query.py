"""The first query of a store opened over memories written before is where the embedding model is
loaded (it loads on first use: ~0.3 s from a warm disk, over 2 s on a busy host). That load is the
query's own time, before the arms' timeouts start: it is not a dense timeout that drops the dense
arm, or, on a store where only dense would find the answer, fails the query. Sync and async."""

from __future__ import annotations

import asyncio
import time

import pytest

from fused_memory import EnsembleMemory, FusionConfig, Memory
from fused_memory.embeddings import MiniLMEmbedder
from fused_memory.store.memory_store import MemoryStore
from tests.conftest import NOW

pytestmark = pytest.mark.slow  # loads the real model, on purpose

NS = "alice"
LOAD_S = 1.0
DENSE_TIMEOUT_S = 0.5  # shorter than the load, far longer than an embedding and a search of two memories


class SlowToLoad(MiniLMEmbedder):
    """The real model, loaded as a busy host loads it: `LOAD_S` later."""

    def _load(self):  # type: ignore[no-untyped-def]
        time.sleep(LOAD_S)
        return super()._load()


@pytest.fixture
def written(tmp_path):
    with MemoryStore.embedded(tmp_path / "s") as store:  # another process's writes, with its own model
        store.add([Memory(text="Caroline adopted a beagle named Biscuit", namespace=NS, id="dog"),
                   Memory(text="The quarterly review moved to Thursday", namespace=NS, id="review")])
    return tmp_path / "s"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_model_loads_before_the_arms_clocks_start(written, mode):
    with MemoryStore.embedded(written, embedder=SlowToLoad()) as store:
        ens = EnsembleMemory(store, FusionConfig(timeouts_s={"dense": DENSE_TIMEOUT_S}))
        try:
            query = "which pet did she get?"  # no word in common with the memory: dense finds it
            if mode == "sync":
                r = ens.retrieve(query, namespace=NS, k=2, now=NOW, arms=["dense"])
            else:
                r = asyncio.run(ens.aretrieve(query, namespace=NS, k=2, now=NOW, arms=["dense"]))
            assert not r.failures and r.ids()[0] == "dog"
            assert r.timings_ms["model_load"] >= LOAD_S * 1000 and r.timings_ms["plan"] < LOAD_S * 1000
            again = ens.retrieve(query, namespace=NS, k=2, now=NOW)  # loaded: nothing to load, all arms
            assert "model_load" not in again.timings_ms and not again.failures and "dog" in again.ids()
        finally:
            ens.close()


def test_a_plan_that_falls_back_loads_the_model_there_and_counts_it_once(written):
    """An identifier that no memory holds: the plan that needs no embedding finds nothing, and the
    full plan, which embeds, loads the model. `shortcut` is what the first round cost, not the load."""
    with MemoryStore.embedded(written, embedder=SlowToLoad()) as store:
        ens = EnsembleMemory(store, FusionConfig(timeouts_s={"dense": DENSE_TIMEOUT_S}))
        try:
            r = ens.retrieve("what about ERR-4521?", namespace=NS, k=2, now=NOW)
            assert r.plan.shortcut is None and not r.failures and r.ids()  # the full plan answered
            assert r.timings_ms["model_load"] >= LOAD_S * 1000 and r.timings_ms["shortcut"] < LOAD_S * 1000
        finally:
            ens.close()
