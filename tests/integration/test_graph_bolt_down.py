"""A Bolt server that goes away mid-suite: the graph arm must fail fast with BackendUnavailable and
the ensemble must still answer from the other arms, flagging the failure.

This module starts its *own* FalkorDB (not the shared `bolt_server`) because it stops it; the
elapsed times are measured and printed (`pytest -s`), not asserted, to keep the test stable. Each
test uses its own namespace (FalkorDB serves one graph whatever the database is called).
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest

from fused_memory.backends.graph.cypher import CypherGraphStore
from fused_memory.errors import BackendUnavailable
from fused_memory.results import EntityCandidate, EntityRef, ParsedQuery
from fused_memory.retrievers.base import ArmRequest
from fused_memory.retrievers.graph import GraphRetriever
from fused_memory.types import EntityMention, Relation

from falkordb_server import FalkorDBServer

pytestmark = pytest.mark.slow  # starts, stops and hangs its own Bolt server

NOW = datetime(2024, 5, 15, 12, 0, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def server() -> Iterator[FalkorDBServer]:
    srv = FalkorDBServer().start()
    yield srv
    srv.cleanup()


def _request() -> ArmRequest:
    ref = EntityRef("Sarah", (EntityCandidate("sarah chen", "Sarah Chen", 1.0),))
    return ArmRequest(query=ParsedQuery(text="who reports to Sarah?", now=NOW, entity_refs=(ref,)),
                      namespace="down", k=10, max_hops=2)


def _timed(fn: Callable[[], object]) -> tuple[BaseException | None, float]:
    start = time.perf_counter()
    try:
        fn()
    except BaseException as exc:  # noqa: BLE001 - the caller inspects it
        return exc, time.perf_counter() - start
    return None, time.perf_counter() - start


def test_graph_arm_fails_fast_when_the_server_stops(server: FalkorDBServer) -> None:
    server.start()
    graph = CypherGraphStore(server.uri)
    graph.open()
    try:
        graph.link("down", [("m1", [EntityMention("Sarah Chen", "PERSON")], None),
                            ("m2", [EntityMention("Tom", "PERSON")], None)])
        graph.relate("down", Relation("Tom", "reports_to", "Sarah Chen", "structural", 0.95))
        arm = GraphRetriever(graph)
        assert [h.memory_id for h in arm.search(_request())] == ["m1", "m2"]

        server.stop()
        err, pooled = _timed(lambda: arm.search(_request()))  # the pooled connection is dead
        assert isinstance(err, BackendUnavailable), err
        err, again = _timed(lambda: arm.search(_request()))  # and a new one is refused
        assert isinstance(err, BackendUnavailable), err
        fresh = CypherGraphStore(server.uri)
        err, opening = _timed(fresh.open)
        assert isinstance(err, BackendUnavailable), err
        print(f"\nBolt down: arm on a dead pooled connection {pooled * 1000:.1f} ms, "
              f"on a refused connection {again * 1000:.1f} ms, open() {opening * 1000:.1f} ms")
    finally:
        graph.close()
        server.start()


def test_ensemble_answers_without_the_graph(server: FalkorDBServer, tmp_path: Path) -> None:
    from fused_memory.embeddings import HashingEmbedder
    from fused_memory.ensemble import EnsembleMemory
    from fused_memory.store.memory_store import MemoryStore
    from fused_memory.types import Memory

    server.start()
    store = MemoryStore.connect(qdrant_location=str(tmp_path / "q"), neo4j_uri=server.uri,
                                embedder=HashingEmbedder(dim=64), ner=False)
    store.open()
    try:
        store.add([Memory(text="Sarah Chen leads the Kestrel project", namespace="alice",
                          entities=("Sarah Chen", "Kestrel")),
                   Memory(text="the Kestrel launch slipped to June", namespace="alice", entities=("Kestrel",))])
        ens = EnsembleMemory(store)
        ok = ens.retrieve("what is Sarah Chen working on?", namespace="alice", k=5, now=NOW)
        assert ok.hits and not ok.failures
        server.stop()
        down, elapsed = None, time.perf_counter()
        down = ens.retrieve("what is Sarah Chen working on?", namespace="alice", k=5, now=NOW)
        elapsed = time.perf_counter() - elapsed
        assert down.hits, "the other arms still answer"
        assert [f.arm for f in down.failures] == ["graph"], down.failures
        print(f"\nensemble with the Bolt server down: {elapsed * 1000:.1f} ms, failures={down.failures}")
    finally:
        store.close()
        server.start()


def test_a_hung_server_is_dropped_by_the_arm_timeout(server: FalkorDBServer, tmp_path: Path) -> None:
    """SIGSTOP: the socket stays open but nothing answers. The neo4j driver has no client-side read
    timeout, so it is the ensemble's per-arm timeout that drops the graph arm (kind "timeout")."""
    from fused_memory.config import FusionConfig
    from fused_memory.embeddings import HashingEmbedder
    from fused_memory.ensemble import EnsembleMemory
    from fused_memory.store.memory_store import MemoryStore
    from fused_memory.types import Memory

    server.start()
    store = MemoryStore.connect(qdrant_location=str(tmp_path / "q"), neo4j_uri=server.uri,
                                embedder=HashingEmbedder(dim=64), ner=False)
    store.open()
    assert server.proc is not None
    try:
        store.add([Memory(text="Sarah Chen leads the Kestrel project", namespace="hung",
                          entities=("Sarah Chen", "Kestrel"))])
        ens = EnsembleMemory(store, FusionConfig(timeouts_s={"graph": 0.5}))
        assert not ens.retrieve("what is Sarah Chen working on?", namespace="hung", k=5, now=NOW).failures
        server.proc.send_signal(signal.SIGSTOP)
        start = time.perf_counter()
        hung = ens.retrieve("what is Sarah Chen working on?", namespace="hung", k=5, now=NOW)
        elapsed = time.perf_counter() - start
        assert hung.hits and [(f.arm, f.kind) for f in hung.failures] == [("graph", "timeout")]
        print(f"\nensemble with the Bolt server hung: {elapsed * 1000:.1f} ms (graph timeout 500 ms)")
    finally:
        if server.proc is not None:
            server.proc.send_signal(signal.SIGCONT)
        store.close()


def test_a_hung_server_does_not_hold_up_planning_after_a_write(server: FalkorDBServer, tmp_path: Path) -> None:
    """A write makes the next query re-read the namespace's entities while planning, before any arm
    runs; on a hung server that read blocked `retrieve` with no timeout and nothing reported (found
    by probing the API). It is now bounded by the graph arm's timeout, one read in flight at a time."""
    import threading

    from fused_memory.config import FusionConfig
    from fused_memory.embeddings import HashingEmbedder
    from fused_memory.ensemble import EnsembleMemory
    from fused_memory.store.memory_store import MemoryStore
    from fused_memory.types import Memory

    server.start()
    store = MemoryStore.connect(qdrant_location=str(tmp_path / "q"), neo4j_uri=server.uri,
                                embedder=HashingEmbedder(dim=64), ner=False)
    store.open()
    assert server.proc is not None
    answers: list[object] = []
    try:
        store.add([Memory(text="Sarah Chen leads the Kestrel project", namespace="hung2",
                          entities=("Sarah Chen", "Kestrel"))])
        ens = EnsembleMemory(store, FusionConfig(timeouts_s={"graph": 0.5}))
        assert not ens.retrieve("what is Sarah Chen working on?", namespace="hung2", k=5, now=NOW).failures
        store.add([Memory(text="Kestrel ships in June", namespace="hung2", entities=("Kestrel",))])
        server.proc.send_signal(signal.SIGSTOP)
        for _ in range(2):  # the second query finds the first one's read still in flight
            worker = threading.Thread(target=lambda: answers.append(
                ens.retrieve("what is Sarah Chen working on?", namespace="hung2", k=5, now=NOW)), daemon=True)
            worker.start()
            worker.join(timeout=20)
            assert not worker.is_alive(), "retrieve blocked on the hung server"
        for hung in answers:
            assert hung.hits and ("graph", "timeout") in [(f.arm, f.kind) for f in hung.failures]  # type: ignore[attr-defined]
        server.proc.send_signal(signal.SIGCONT)  # the server thaws: the entities are back within moments
        deadline = time.monotonic() + 10
        while ens.retrieve("what is Sarah Chen working on?", namespace="hung2", k=5, now=NOW).failures:
            assert time.monotonic() < deadline, "queries did not recover after the server came back"
            time.sleep(0.05)
    finally:
        if server.proc is not None:
            server.proc.send_signal(signal.SIGCONT)
        store.close()
