"""connect()'s graph lives in the Qdrant engine (`backends.graph.engine`): several workers on one
collection see each other's relations, entities, aliases and deletes on their next query, a
relation outlives a restart with no graph file, `open()` reads no memory, and every graph read
stays inside its namespace.

Two workers are two `MemoryStore`s over one injected `QdrantClient` (local mode: the server's API
and the server backend's code), each with its own objects, as two processes would have.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from qdrant_client import QdrantClient

from fused_memory import EnsembleMemory, Memory, MemoryStore
from fused_memory.backends.graph.embedded import EmbeddedGraphStore
from fused_memory.backends.graph.engine import EngineGraphStore
from fused_memory.backends.lexical.engine import EngineLexicalIndex
from fused_memory.backends.vector.server import QdrantClientBackend
from fused_memory.embeddings import HashingEmbedder
from fused_memory.errors import ConfigurationError
from fused_memory.types import EntityMention, Relation

NOW = datetime(2024, 5, 15, 12, 0, tzinfo=timezone.utc)
NS = "alice"


@pytest.fixture
def server() -> Iterator[QdrantClient]:
    client = QdrantClient(location=":memory:")
    yield client
    client.close()


def worker(client: QdrantClient) -> MemoryStore:
    """One worker process's store: its own objects, the shared collection, no graph server named."""
    return MemoryStore.connect(qdrant_client=client, embedder=HashingEmbedder(dim=64), ner=False).open()


def graph_ids(store: MemoryStore, query: str, namespace: str = NS) -> list[str]:
    """The graph arm's ranking through the ensemble, as a caller asks for it."""
    return EnsembleMemory(store).retrieve(query, namespace=namespace, arms=["graph"], now=NOW).ids()


def mem(mid: str, text: str, *entities: str, namespace: str = NS) -> Memory:
    return Memory(text=text, namespace=namespace, id=mid, entities=entities)


def test_connect_without_a_graph_server_keeps_the_graph_in_the_engine(server: QdrantClient) -> None:
    store = worker(server)
    assert isinstance(store.graph, EngineGraphStore)
    assert server.collection_exists("fused_memory__graph")
    store.close()


def test_the_other_worker_sees_a_relation_a_new_entity_and_a_delete_at_once(server: QdrantClient) -> None:
    a, b = worker(server), worker(server)
    a.add([mem("sarah", "Sarah Chen leads the platform team.", "Sarah Chen"),
           mem("tom", "Tom Becker started on Monday.", "Tom Becker")])
    assert graph_ids(b, "Maria Lopez") == []  # B's matcher is warm before A's next writes
    a.relate("Tom Becker", "reports_to", "Sarah Chen", namespace=NS, kind="structural")
    assert graph_ids(b, "who reports to Sarah Chen?")[0] == "tom"
    a.add(mem("maria", "Maria Lopez joined as designer.", "Maria Lopez"))
    assert graph_ids(b, "Maria Lopez") == ["maria"]
    a.delete(NS, ["maria"])
    assert graph_ids(b, "Maria Lopez") == []
    assert "maria lopez" not in {e.id for e in b.graph.entities(NS)}  # type: ignore[union-attr]  # collected
    a.close()
    b.close()


def test_an_alias_one_worker_adds_is_resolved_by_the_other(server: QdrantClient) -> None:
    a, b = worker(server), worker(server)
    a.add(mem("k", "Kestrel shipped v2.", "Kestrel"))
    assert graph_ids(b, "KST") == []
    a.graph.add_alias(NS, "Kestrel", "KST")  # type: ignore[union-attr]
    assert [e.id for e in b.graph.resolve(NS, "KST")] == ["kestrel"]  # type: ignore[union-attr]
    assert graph_ids(b, "KST") == ["k"]
    a.close()
    b.close()


def test_a_relation_survives_close_and_reopen_without_a_graph_path(tmp_path: Path) -> None:
    def store() -> MemoryStore:
        return MemoryStore.connect(qdrant_client=client, embedder=HashingEmbedder(dim=64), ner=False).open()

    client = QdrantClient(path=str(tmp_path / "qdrant"))
    first = store()
    first.add([mem("sarah", "Sarah Chen leads the platform team.", "Sarah Chen"),
               mem("tom", "Tom Becker started on Monday.", "Tom Becker")])
    first.relate("Tom Becker", "reports_to", "Sarah Chen", namespace=NS, kind="structural")
    first.close()
    again = store()
    assert graph_ids(again, "who reports to Sarah Chen?")[0] == "tom"
    assert isinstance(again.graph, EngineGraphStore)
    assert again.graph.entities(NS)[1].relations == (("reports_to", True),)
    again.close()
    client.close()


class Calls:
    """Counts a real client's calls by method and collection (the engine does the work)."""

    def __init__(self, client: QdrantClient, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seen: Counter[tuple[str, str]] = Counter()
        for name in ("scroll", "count", "retrieve", "facet", "query_batch_points", "query_points", "upsert"):
            method = getattr(client, name)
            monkeypatch.setattr(client, name, self._counting(name, method))

    def _counting(self, name: str, method: Any) -> Any:
        def call(collection_name: str, *args: Any, **kwargs: Any) -> Any:
            self.seen[(name, collection_name)] += 1
            return method(collection_name, *args, **kwargs)
        return call

    def total(self) -> int:
        return sum(self.seen.values())

    def on(self, collection: str) -> int:
        return sum(n for (_m, c), n in self.seen.items() if c == collection)


def test_open_reads_no_memory_and_a_graph_query_costs_the_same_calls_at_any_corpus_size(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine calls of one graph-only query do not grow with the memories of other namespaces
    (docs/results.md lists them per plan); `open()` scrolls no memory at all."""
    per_size = []
    for others in (20, 200):
        client = QdrantClient(location=":memory:")
        seed = worker(client)
        seed.add([mem(f"o{i}", f"note {i} about Kestrel", "Kestrel", namespace=f"other-{i % 7}")
                  for i in range(others)])
        seed.add([mem("sarah", "Sarah Chen leads the platform team.", "Sarah Chen"),
                  mem("tom", "Tom Becker met Sarah Chen.", "Tom Becker", "Sarah Chen")])
        seed.relate("Tom Becker", "reports_to", "Sarah Chen", namespace=NS, kind="structural")
        seed.close()
        with monkeypatch.context() as m:
            calls = Calls(client, m)
            store = worker(client)
            assert calls.seen[("scroll", "fused_memory")] == 0 and calls.on("fused_memory__graph") == 0
            EnsembleMemory(store).retrieve("Sarah Chen", namespace=NS, arms=["graph"], now=NOW)  # matcher warm
            calls.seen.clear()
            ids = EnsembleMemory(store).retrieve("Sarah Chen", namespace=NS, arms=["graph"], now=NOW).ids()
            per_size.append((calls.total(), ids))
        store.close()
        client.close()
    (small, ids_small), (large, ids_large) = per_size
    assert ids_small == ids_large == ["sarah", "tom"]
    assert small == large and 0 < small <= 16, per_size


def test_connect_refuses_a_graph_file_beside_a_server() -> None:
    with pytest.raises(ConfigurationError, match="leave graph_path out"):
        MemoryStore.connect(qdrant_url="http://localhost:6333", graph_path="/tmp/graph", embedder=HashingEmbedder(8))
    with pytest.raises(ConfigurationError, match="directory path"):
        MemoryStore.connect(qdrant_location=":memory:", graph_path="  ", embedder=HashingEmbedder(8))


def test_a_collection_written_before_the_engine_graph_is_brought_in_on_first_use(tmp_path: Path) -> None:
    """What connect() wrote until now: the memories in Qdrant, the graph in the process. Opened as
    it is; each namespace's graph is linked from the payloads on its first query, and `upgrade()`
    does the rest once for every process."""
    old_vectors = QdrantClientBackend(location=str(tmp_path / "qdrant"), sparse=True)
    old = MemoryStore(old_vectors, EngineLexicalIndex(old_vectors), HashingEmbedder(dim=64), EmbeddedGraphStore(None))
    old.extractor.enabled = False
    old.add([mem("a1", "Sarah Chen leads the platform team.", "Sarah Chen"),
             mem("a2", "Tom Becker met Sarah Chen.", "Tom Becker", "Sarah Chen"),
             mem("b1", "Priya runs payroll.", "Priya", namespace="bob")])
    old.close()
    client = QdrantClient(path=str(tmp_path / "qdrant"))  # a server's client: local mode keeps its graph in SQLite
    new = MemoryStore.connect(qdrant_client=client, embedder=HashingEmbedder(dim=64), ner=False).open()
    graph = new.graph
    assert isinstance(graph, EngineGraphStore) and graph.stats()["memories"] == 0  # open read nothing
    assert graph_ids(new, "Sarah Chen") == ["a1", "a2"]
    assert graph.stats()["memories"] == 2  # alice only
    assert new.upgrade() == {"graph": 1}
    assert graph.stats()["memories"] == 3 and graph_ids(new, "Priya", "bob") == ["b1"]
    assert new.upgrade() == {}
    new.close()
    client.close()


# ---------------------------------------------------------------- namespace isolation, every graph read
NAMES = ("Sarah Chen", "Sarah", "Tom Baker", "Kestrel", "Paris")
NAMESPACES = ("acme", "globex", "o'hare `x`")
writes_st = st.lists(st.one_of(
    st.tuples(st.just("link"), st.sampled_from(NAMESPACES), st.sampled_from(["m1", "m2", "m3", "shared"]),
              st.lists(st.sampled_from(NAMES), max_size=3, unique=True)),
    st.tuples(st.just("relate"), st.sampled_from(NAMESPACES), st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.tuples(st.just("alias"), st.sampled_from(NAMESPACES), st.sampled_from(NAMES), st.sampled_from(["SC", "KS"])),
    st.tuples(st.just("unlink"), st.sampled_from(NAMESPACES), st.sampled_from(["m1", "m2", "m3", "shared"])),
), min_size=1, max_size=10)


def _reads(g: Any, ns: str) -> Any:
    return (sorted((e.id, e.aliases, e.mentions, e.relations) for e in g.entities(ns)),
            {n: [e.id for e in g.resolve(ns, n)] for n in (*NAMES, "SC", "KS")},
            {m: g.mentions_of(ns, m) for m in ("m1", "m2", "m3", "shared")},
            dict(g.stats(ns)),
            {n: [(h.memory_id, round(h.score, 9)) for h in g.traverse(ns, [(n, 1.0)], 2, 20, NOW)] for n in NAMES},
            {n: [h.memory_id for h in g.traverse(ns, [(n, 1.0)], 1, 20, NOW, asked=[(n.lower(), "knows", True)])]
             for n in NAMES})


def test_every_graph_read_stays_in_its_namespace() -> None:
    """Hypothesis writes to several namespaces of one engine graph and, for each namespace, to an
    engine graph of its own; every read (entities, resolve, mentions_of, stats, traversal, asked
    relations) of the shared graph equals that namespace's own graph."""
    shared_client = QdrantClient(location=":memory:")
    shared = EngineGraphStore(QdrantClientBackend(client=shared_client))
    shared.open()

    @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
    @given(writes=writes_st)
    def run(writes: list[tuple]) -> None:
        alone_client = QdrantClient(location=":memory:")
        alone = {ns: EngineGraphStore(QdrantClientBackend(client=alone_client), f"alone-{i}")
                 for i, ns in enumerate(NAMESPACES)}
        for g in alone.values():
            g.open()
        for ns in NAMESPACES:  # each example starts from empty namespaces
            shared._delete(_points(shared, ns))
        for w in writes:
            for g in (shared, alone[w[1]]):
                if w[0] == "link":
                    g.link(w[1], [(w[2], [EntityMention(n, "PERSON") for n in w[3]], None)])
                elif w[0] == "relate":
                    g.relate(w[1], Relation(w[2], "knows", w[3], "semantic", 0.8))
                elif w[0] == "alias":
                    g.add_alias(w[1], w[2], w[3])
                else:
                    g.unlink(w[1], [w[2]])
        for ns in NAMESPACES:
            assert _reads(shared, ns) == _reads(alone[ns], ns), ns
        alone_client.close()

    try:
        run()
    finally:
        shared_client.close()


def _points(g: EngineGraphStore, ns: str) -> list[str]:
    from qdrant_client import models
    client = g.host.engine()
    records, _ = client.scroll(g.collection, scroll_filter=models.Filter(must=[models.FieldCondition(
        key="ns", match=models.MatchValue(value=ns))]), limit=10_000)
    return [str(r.id) for r in records]


@pytest.mark.parametrize("facet_limit", [1024, 8])
def test_traversal_ranks_as_the_embedded_graph_does_on_a_corpus_with_hubs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, facet_limit: int) -> None:
    """The same links and relations in both graphs: every traversal (1 or 2 hops, asked relations
    too) returns the same memories, scores and paths. A user in every memory and a speaker in half
    of them are hubs: their co-mentions are counted by the engine's facet, not read. With a facet
    of 8 names for the mention counts, those it leaves out are bounded, or counted one by one."""
    import random

    from fused_memory.backends.graph import engine_walk

    monkeypatch.setattr(engine_walk, "COUNT_FACET_LIMIT", facet_limit)

    rng = random.Random(5)
    names = [f"Ent{i:03d}" for i in range(60)]
    weights = [1.0 / (i + 1) ** 1.1 for i in range(60)]
    engine = EngineGraphStore(QdrantClientBackend(location=":memory:"))
    embedded = EmbeddedGraphStore(str(tmp_path / "graph"))
    for g in (engine, embedded):
        g.open()
    items = []
    for i in range(200):
        picks = sorted(set(rng.choices(names, weights, k=rng.randint(1, 3))))
        ms = [EntityMention("User", "PERSON"), *(EntityMention(n, "ORG") for n in picks)]
        if i % 2 == 0:
            ms.append(EntityMention("Speaker A", "PERSON"))
        items.append((f"m{i:03d}", ms, None))
    rels = [Relation(rng.choice(names[:30]), f"rel{r % 3}", rng.choice(names[:30]), "structural",
                     round(rng.uniform(0.5, 1.0), 3)) for r in range(25)]
    for g in (engine, embedded):
        for i in range(0, len(items), 100):
            g.link(NS, items[i:i + 100])
        for r in rels:
            g.relate(NS, r)
    for seed in [*names[:8], "User", "Speaker A"]:
        for hops, asked in ((1, ()), (2, ()), (2, ((seed.lower(), "rel0", True),))):
            got, want = (g.traverse(NS, [(seed, 1.0)], hops, 50, NOW, asked=asked) for g in (engine, embedded))
            assert [(h.memory_id, round(h.score, 9), h.detail) for h in got] == \
                [(h.memory_id, round(h.score, 9), h.detail) for h in want], (seed, hops, asked)
    engine.host.close()  # type: ignore[attr-defined]
    embedded.close()
