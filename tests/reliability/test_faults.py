"""Fault injection: an arm that raises, an arm that hangs, the vector backend failing one call, the
graph failing a write, the Bolt server killed mid-run, every arm failing.

Expected: every query still answers from the remaining arms within its timeout + 10% (plus 0.5 s of
slack for a loaded machine; elapsed times are measured, never tightly asserted), the result names the
failed arms, and nothing is written half-way.

What "nothing half-way" means (decided here, implemented in `MemoryStore._add_chunk`): when `add`
raises, every index that was written is rolled back - new memories are removed, overwritten ones
restored from their previous payload - so the store looks as if the call never happened. What a
rollback cannot reach (the graph server is gone) is repaired on the next open for the embedded graph
(reconcile with the vector payloads, the source of truth), and the ensemble never returns a memory
the vector store does not hold. Faults come from `_support.FaultProxy`, a thin wrapper that forwards
to the real backend object and raises or stalls only where a test tells it to.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from fused_memory.config import FusionConfig
from fused_memory.ensemble import EnsembleMemory
from fused_memory.errors import BackendError, BackendUnavailable
from fused_memory.results import ARMS, Hit
from fused_memory.store.memory_store import MemoryStore
from fused_memory.types import Memory, MemoryType

from _support import NOW, FaultProxy, Injected, counts, deadline, elapsed, embedded, lexical_ids, with_cypher_graph

NS = "faults"
QUERY = "what is Sarah Chen doing on the Kestrel project?"


def seed(namespace: str = NS) -> list[Memory]:
    return [
        Memory(text="Sarah Chen leads the Kestrel project", namespace=namespace, id="m-lead",
               type=MemoryType.FACT, entities=("Sarah Chen", "Kestrel")),
        Memory(text="the Kestrel launch slipped to June", namespace=namespace, id="m-slip", entities=("Kestrel",)),
        Memory(text="I prefer dark mode in every editor", namespace=namespace, id="m-pref",
               type=MemoryType.PREFERENCE),
        Memory(text="lunch with Tom Baker about the Kestrel budget", namespace=namespace, id="m-lunch",
               type=MemoryType.EVENT, event_at=NOW - timedelta(days=6), entities=("Tom Baker", "Kestrel")),
        Memory(text="badge ID is 47821", namespace=namespace, id="m-badge", type=MemoryType.FACT),
    ]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    s = embedded(tmp_path / "store").open()
    s.add(seed())
    yield s
    s.close()


class RaisingArm:
    def __init__(self, name: str, message: str = "arm exploded") -> None:
        self.name, self.message = name, message

    def search(self, request: object) -> list:
        raise RuntimeError(self.message)


class HangingArm:
    """Blocks until released (the test releases it at teardown so no thread outlives the test)."""

    def __init__(self, name: str, release: threading.Event) -> None:
        self.name, self.release = name, release

    def search(self, request: object) -> list:
        self.release.wait(30)
        return []


def _failed(result: object) -> list[tuple[str, str]]:
    return sorted((f.arm, f.kind) for f in result.failures)


def _check_namespace(result: object, namespace: str = NS) -> None:
    hits = result.hits
    assert hits, "the remaining arms must still answer"
    assert all(h.memory.namespace == namespace for h in hits)
    ids = [h.memory.id for h in hits]
    assert len(ids) == len(set(ids))


# ------------------------------------------------------------------ arms that raise or hang
@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_an_arm_that_raises_is_dropped_and_named(store: MemoryStore, mode: str,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    ens = EnsembleMemory(store, arms={"lexical": RaisingArm("lexical", "lexical arm exploded")})
    try:
        with elapsed() as took, caplog.at_level("WARNING", logger="fused_memory.ensemble"):
            result = (ens.retrieve(QUERY, namespace=NS, k=5, now=NOW) if mode == "sync"
                      else await ens.aretrieve(QUERY, namespace=NS, k=5, now=NOW))
        _check_namespace(result)
        assert _failed(result) == [("lexical", "error")]
        assert "lexical arm exploded" in result.failures[0].reason
        # logged too: a backend that stays down must show somewhere an operator looks (no tenant named)
        [record] = [r for r in caplog.records if r.name == "fused_memory.ensemble"]
        assert record.levelname == "WARNING" and "lexical (error: " in record.getMessage()
        assert "lexical arm exploded" in record.getMessage()
        assert NS not in record.getMessage()
        assert "lexical" not in {c.arm for h in result.hits for c in h.contributions}
        assert took() < deadline(2.0)
    finally:
        ens.close()


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_an_arm_that_hangs_is_dropped_at_its_timeout(store: MemoryStore, mode: str) -> None:
    release = threading.Event()
    timeout = 0.4
    ens = EnsembleMemory(store, FusionConfig(timeouts_s={"graph": timeout}),
                         arms={"graph": HangingArm("graph", release)})
    try:
        ens.retrieve(QUERY, namespace=NS, k=5, now=NOW, arms=["dense"])  # warm the pool and the matcher
        with elapsed() as took:
            result = (ens.retrieve(QUERY, namespace=NS, k=5, now=NOW) if mode == "sync"
                      else await ens.aretrieve(QUERY, namespace=NS, k=5, now=NOW))
        _check_namespace(result)
        assert "graph" in result.plan.arms
        assert _failed(result) == [("graph", "timeout")]
        assert took() <= deadline(timeout), f"{took():.2f}s for a {timeout}s arm timeout"
        print(f"\nhung graph arm ({mode}): answered in {took() * 1000:.0f} ms, timeout {timeout * 1000:.0f} ms")
    finally:
        release.set()
        ens.close()


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_hung_arms_do_not_starve_later_queries(store: MemoryStore, mode: str) -> None:
    release = threading.Event()
    timeout = 0.3
    ens = EnsembleMemory(store, FusionConfig(timeouts_s=dict.fromkeys(ARMS, timeout)), max_workers=2,
                         arms={"graph": HangingArm("graph", release)})
    ask = (lambda: ens.retrieve(QUERY, namespace=NS, k=5, now=NOW)) if mode == "sync" else \
        (lambda: asyncio.run(ens.aretrieve(QUERY, namespace=NS, k=5, now=NOW)))
    try:
        for _ in range(5):
            with elapsed() as took:
                result = ask()
            _check_namespace(result)
            assert _failed(result) == [("graph", "timeout")]
            assert took() <= deadline(timeout)
    finally:
        release.set()
        ens.close()


# ------------------------------------------------------------------ the vector backend fails one call
def test_vector_backend_failing_one_query_costs_only_the_vector_arms(store: MemoryStore) -> None:
    proxy = FaultProxy(store.vectors).fail("query_batch", exc=BackendUnavailable("qdrant went away"))
    store.vectors = proxy
    ens = EnsembleMemory(store, optimizer=False)
    try:
        with elapsed() as took:
            result = ens.retrieve(QUERY, namespace=NS, k=5, now=NOW)
        vector_arms = {a for a in result.plan.arms if a in ("dense", "temporal", "type")}
        assert vector_arms and {"lexical", "graph"} <= set(result.plan.arms)
        assert _failed(result) == sorted((a, "error") for a in vector_arms)
        assert all("qdrant went away" in f.reason for f in result.failures)
        _check_namespace(result)  # lexical and graph hits, hydrated from the (now healthy) store
        assert took() < deadline(2.0)
        again = ens.retrieve(QUERY, namespace=NS, k=5, now=NOW)
        assert not again.failures and again.ids()[0] == "m-lead"
    finally:
        ens.close()


class CarryingArm:
    """A dense stand-in that answers one memory with its payload at hand (as the vector arms do),
    so the fused list holds one carried memory and BM25's ids that need a read."""

    def __init__(self, name: str, memory: Memory) -> None:
        self.name, self.memory = name, memory

    def search(self, request: object) -> list:
        return [Hit(self.memory.id, 0.9, memory=self.memory)]


def test_vector_backend_failing_hydration_answers_with_what_the_arms_carried(store: MemoryStore) -> None:
    """Hydrating BM25's and the graph's hits needs the vector store (the payloads). When that one
    call fails, the answer is what the other arms carried, with the arms left short named as
    failed ("hydration"), as for a failed arm; with nothing carried, the backend's error is raised."""
    [pref] = store.get_many(NS, ["m-pref"])
    store.vectors = FaultProxy(store.vectors).fail("get", exc=BackendUnavailable("qdrant went away"), times=3)
    ens = EnsembleMemory(store, arms={"dense": CarryingArm("dense", pref)})
    try:
        result = ens.retrieve("badge 47821", namespace=NS, k=5, now=NOW, arms=["dense", "lexical"])
        assert result.ids() == ["m-pref"]  # m-badge, found by BM25 alone, could not be read
        [failure] = result.failures
        assert (failure.arm, failure.kind) == ("lexical", "hydration") and "qdrant went away" in failure.reason
        assert "FAILED lexical (hydration)" in result.explain()
        # k decides how many come back, not whether: BM25's m-badge is the fused top 1, and the answer
        # is the best of what was carried, not nothing
        assert ens.retrieve("badge 47821", namespace=NS, k=1, now=NOW, arms=["dense", "lexical"]).ids() == ["m-pref"]
        with pytest.raises(BackendUnavailable, match="qdrant went away"):  # nothing carried: no answer
            ens.retrieve("badge 47821", namespace=NS, k=5, now=NOW, arms=["lexical"])
        # the fault was three calls: the next query reads m-badge and is whole again
        again = ens.retrieve("badge 47821", namespace=NS, k=5, now=NOW, arms=["dense", "lexical"])
        assert "m-badge" in again.ids() and not again.failures
    finally:
        ens.close()


def _hydrate(store: MemoryStore, results: dict, k: int) -> tuple[list[str], dict[str, str]]:
    from fused_memory.ensemble.fusion import fuse
    from fused_memory.ensemble.hydration import hydrate

    weights = {a: 1.0 for a in results}
    kept, failures = hydrate(store, NS, results, fuse(results, weights, 10, limit=k), k,
                             lambda: fuse(results, weights, 10))
    return [f.memory_id for f, _ in kept], {f.arm: f.kind for f in failures}


def test_hydration_fills_k_past_a_memory_deleted_since_the_arms_saw_it(store: MemoryStore) -> None:
    [pref] = store.get_many(NS, ["m-pref"])
    results = {"dense": [Hit("m-pref", 0.5, memory=pref)],
               "lexical": [Hit("m-badge", 1.0), Hit("m-gone", 0.9), Hit("m-lead", 0.8)]}
    # ranking m-badge, m-gone, m-lead, m-pref: m-gone is in the top 2 but no longer stored, so the
    # next candidate (read in a second round trip) takes its place, and nothing failed
    assert _hydrate(store, results, 2) == (["m-badge", "m-lead"], {})


def test_hydration_reads_no_more_than_the_k_places_need(store: MemoryStore) -> None:
    """Ranking m-badge, m-gone (deleted), m-pref (carried by dense), m-slip: after the first read
    m-badge and m-pref fill k = 2, so m-slip is not read, and a deleted memory is no arm's failure."""
    [pref] = store.get_many(NS, ["m-pref"])
    results = {"dense": [Hit("m-pref", 0.5, memory=pref)],
               "lexical": [Hit("m-badge", 1.0), Hit("m-gone", 0.9), Hit("m-slip", 0.5)]}
    proxy = FaultProxy(store.vectors).stall("get", times=0)  # counts the reads, changes nothing
    store.vectors = proxy
    assert _hydrate(store, results, 2) == (["m-badge", "m-pref"], {})
    assert proxy.calls["get"] == 1


def test_hydration_names_every_arm_whose_hits_above_the_kept_ones_were_lost(store: MemoryStore) -> None:
    [pref] = store.get_many(NS, ["m-pref"])
    results = {"dense": [Hit("m-pref", 0.5, memory=pref)], "lexical": [Hit("m-badge", 1.0)],
               "graph": [Hit("m-lead", 1.0)]}
    store.vectors = FaultProxy(store.vectors).fail("get", exc=BackendUnavailable("qdrant went away"), times=1)
    # the ranking is m-badge, m-lead (ties broken by id), m-pref: at k = 1 only m-pref can be had, and
    # both arms above it lost their hit, though only lexical's was in the top 1
    assert _hydrate(store, results, 1) == (["m-pref"], {"lexical": "hydration", "graph": "hydration"})


def test_vector_write_failure_writes_nothing(store: MemoryStore) -> None:
    before = counts(store, NS)
    store.vectors = FaultProxy(store.vectors).fail("upsert", exc=BackendUnavailable("disk full"))
    new = Memory(text="zebracorn token alpha", namespace=NS, id="m-new", entities=("Zebracorn",))
    with pytest.raises(BackendUnavailable, match="disk full"):
        store.add(new)
    assert counts(store, NS) == before
    assert store.get_many(NS, ["m-new"]) == [] and lexical_ids(store, NS, "zebracorn") == []
    assert store.graph is not None and store.graph.mentions_of(NS, "m-new") == []
    assert store.graph.resolve(NS, "Zebracorn") == []
    store.add(new)  # the fault was one call: the retry goes through, everywhere
    assert counts(store, NS) == tuple(n + 1 for n in before)
    assert lexical_ids(store, NS, "zebracorn") == ["m-new"] and store.graph.mentions_of(NS, "m-new") == ["zebracorn"]


# ------------------------------------------------------------------ the graph fails a write
def test_graph_write_failure_rolls_back_new_and_overwritten_memories(store: MemoryStore, tmp_path: Path) -> None:
    assert store.graph is not None
    before = counts(store, NS)
    old = store.get_many(NS, ["m-slip"])[0]
    store.graph = FaultProxy(store.graph).fail("link", exc=BackendUnavailable("graph server gone"))
    batch = [Memory(text="quokkafish token beta", namespace=NS, id="m-new2", entities=("Quokkafish",)),
             Memory(text="the Kestrel launch moved to platypus week", namespace=NS, id="m-slip",
                    entities=("Platypus",))]
    with pytest.raises(BackendUnavailable, match="graph server gone"):
        store.add(batch)
    # the new memory is nowhere; the overwritten one is back to its previous version everywhere
    assert counts(store, NS) == before
    assert store.get_many(NS, ["m-new2"]) == [] and lexical_ids(store, NS, "quokkafish") == []
    restored = store.get_many(NS, ["m-slip"])[0]
    assert (restored.text, restored.entities, restored.type) == (old.text, old.entities, old.type)
    assert lexical_ids(store, NS, "platypus") == [] and "m-slip" in lexical_ids(store, NS, "slipped June")
    dense = store.retriever("dense")
    from fused_memory.query.parse import parse_query
    from fused_memory.retrievers.base import ArmRequest
    req = ArmRequest(parse_query(old.text, now=NOW), NS, 3)
    assert dense.search(req)[0].memory_id == "m-slip" and dense.search(req)[0].score == pytest.approx(1.0, abs=1e-4)
    assert store.graph.mentions_of(NS, "m-slip") == ["kestrel"] and store.graph.resolve(NS, "Platypus") == []
    # and it stays consistent across a restart (reconcile finds nothing to repair)
    store.close()
    again = embedded(tmp_path / "store").open()
    try:
        assert again.graph is not None
        assert counts(again, NS) == before and again.graph.mentions_of(NS, "m-slip") == ["kestrel"]
    finally:
        again.close()


def test_a_rollback_that_cannot_reach_the_graph_is_repaired_on_open(store: MemoryStore, tmp_path: Path,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    """The graph write lands but its acknowledgement is lost, and the graph is unreachable for the
    rollback: the memory is rolled back from the vector store and BM25 and left in the graph. Queries
    never return it (hydration checks the source of truth); the next open unlinks it."""
    assert store.graph is not None
    before = counts(store, NS)
    proxy = FaultProxy(store.graph).fail("link", after=True, exc=BackendUnavailable("ack lost"))
    store.graph = proxy
    proxy.fail("unlink", exc=BackendUnavailable("graph unreachable"))
    ghost = Memory(text="Sarah Chen owns the wombat budget", namespace=NS, id="m-ghost", entities=("Sarah Chen",))
    with pytest.raises(BackendUnavailable, match="ack lost") as info:
        store.add(ghost)
    assert any("rollback incomplete" in n and "graph unreachable" in n for n in getattr(info.value, "__notes__", []))
    assert store.vectors.count(NS) == before[0] and store.lexical.count(NS) == before[1]
    assert store.graph.stats(NS)["memories"] == before[2] + 1  # the leftover
    ens = EnsembleMemory(store)
    try:
        result = ens.retrieve("what does Sarah Chen own?", namespace=NS, k=10, now=NOW)
        assert "graph" in result.plan.arms and "m-ghost" not in result.ids()
    finally:
        ens.close()
    store.close()
    caplog.set_level("WARNING", logger="fused_memory.store.memory_store")
    again = embedded(tmp_path / "store").open()
    try:
        assert counts(again, NS) == before
        assert again.graph.mentions_of(NS, "m-ghost") == []  # type: ignore[union-attr]
        assert "1 unlinked" in caplog.text
    finally:
        again.close()


# ------------------------------------------------------------------ every arm fails
@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_all_arms_failing_raise_one_backend_unavailable(store: MemoryStore, mode: str) -> None:
    store.vectors = FaultProxy(store.vectors).fail("query_batch", times=10, exc=Injected("vectors down"))
    ens = EnsembleMemory(store, optimizer=False, arms={"lexical": RaisingArm("lexical", "bm25 down"),
                                                       "graph": RaisingArm("graph", "graph down")})
    try:
        with pytest.raises(BackendUnavailable) as info:
            if mode == "sync":
                ens.retrieve(QUERY, namespace=NS, k=5, now=NOW)
            else:
                await ens.aretrieve(QUERY, namespace=NS, k=5, now=NOW)
        causes = info.value.causes
        planned = set(causes)
        assert {"dense", "lexical", "graph"} <= planned
        assert causes["lexical"].endswith("bm25 down") and causes["graph"].endswith("graph down")
        assert all("vectors down" in causes[a] for a in planned - {"lexical", "graph"})
        for arm in planned:
            assert f"{arm}: " in str(info.value)
    finally:
        ens.close()


# ------------------------------------------------------------------ the Bolt server killed mid-run
@pytest.fixture
def own_server() -> Iterator[object]:
    from falkordb_server import FalkorDBServer
    srv = FalkorDBServer().start()
    yield srv
    srv.cleanup()


@pytest.mark.slow  # starts and kills its own Bolt server
def test_bolt_server_killed_mid_run(own_server: object, tmp_path: Path) -> None:
    srv: Any = own_server
    timeout = 1.0
    store = with_cypher_graph(tmp_path / "cy", srv.uri, timeout_s=timeout).open()
    ens = EnsembleMemory(store, FusionConfig(timeouts_s=dict.fromkeys(ARMS, timeout)))
    try:
        store.add(seed("killed"))
        assert store.graph is not None
        results, times = [], []
        killer = threading.Timer(0.6, lambda: srv.proc.send_signal(signal.SIGKILL))
        killer.start()
        t_end = time.perf_counter() + 1.6
        while time.perf_counter() < t_end:
            with elapsed() as took:
                results.append(ens.retrieve(QUERY, namespace="killed", k=5, now=NOW))
            times.append(took())
        killer.join()
        srv.proc.wait(5)
        assert not srv.running
        after = ens.retrieve(QUERY, namespace="killed", k=5, now=NOW)
        results.append(after)
        healthy = [r for r in results if not r.failures]
        degraded = [r for r in results if r.failures]
        assert healthy and degraded, (len(healthy), len(degraded))
        assert all(r.hits and {f.arm for f in r.failures} == {"graph"} for r in degraded)
        assert all("graph" in r.plan.arms for r in healthy)
        assert max(times) <= deadline(timeout), times
        print(f"\nBolt server SIGKILLed mid-run: {len(healthy)} healthy + {len(degraded)} degraded answers, "
              f"slowest {max(times) * 1000:.0f} ms (timeout {timeout * 1000:.0f} ms)")

        # a write while the server is dead fails cleanly: nothing half-written in the vectors or BM25
        before = (store.vectors.count("killed"), store.lexical.count("killed"))
        with pytest.raises(BackendError):
            store.add(Memory(text="narwhal memo for Sarah Chen", namespace="killed", id="m-dead",
                             entities=("Sarah Chen",)))
        assert (store.vectors.count("killed"), store.lexical.count("killed")) == before
        assert store.get_many("killed", ["m-dead"]) == [] and lexical_ids(store, "killed", "narwhal") == []

        srv.start()  # a fresh server (FalkorDB here keeps no data)
        recovered = None
        for _ in range(20):
            recovered = ens.retrieve(QUERY, namespace="killed", k=5, now=NOW)
            if not recovered.failures:
                break
            time.sleep(0.1)
        assert recovered is not None and not recovered.failures and recovered.hits
    finally:
        ens.close()
        store.close()
