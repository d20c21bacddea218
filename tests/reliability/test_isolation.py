"""Tenant isolation: hypothesis-generated memories in several namespaces, random queries through every
arm and the ensemble, random deletes.

Every memory's text carries a marker word of its namespace, entities are shared across namespaces,
and some memory ids exist in several namespaces at once (the same id is a different memory in each).
Expected: 0 hits from another namespace in any arm (checked by id, by the other namespaces' marker
words, and on hydrated memories by namespace and text); a delete in one namespace leaves every
other namespace's counts (vector store, lexical index, graph) and memories untouched. Runs on the
embedded graph, on the Cypher graph over FalkorDB (whose one graph also holds other tests' data), and
on connect()'s graph in the Qdrant engine (qdrant-client local mode).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fused_memory.embeddings import HashingEmbedder
from fused_memory.ensemble import EnsembleMemory
from fused_memory.query.parse import parse_query
from fused_memory.results import ARMS, EntityCandidate, EntityRef
from fused_memory.retrievers.base import ArmRequest
from fused_memory.retrievers.vector import ScopedGraphRetriever
from fused_memory.store.memory_store import MemoryStore
from fused_memory.text import normalize_entity_id
from fused_memory.types import Memory, MemoryType, TimeWindow

from _support import DIM, NOW, counts, embedded, lexical_ids, with_cypher_graph

SUFFIX = uuid.uuid4().hex[:6]
NAMESPACES = tuple(f"{n}-{SUFFIX}" for n in ("acme", "globex", "initech", "o'hare `x`"))
MARKERS = dict(zip(NAMESPACES, ("amberwolf", "bluefinch", "cobaltyak", "dunemoth"), strict=True))
ENTITIES = ("Sarah Chen", "Tom Baker", "Kestrel", "Paris", "Priya")
WORDS = ("badge", "lunch", "deploy", "budget", "launch", "meeting", "prefer", "dark", "mode", "coffee")
PHRASES = ("", "last week", "yesterday", "recently", "in May")

memories_st = st.lists(st.tuples(
    st.sampled_from(NAMESPACES),
    st.one_of(st.integers(0, 10_000).map(str), st.sampled_from(["shared-1", "shared-2", "shared-3"])),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=5),
    st.lists(st.sampled_from(ENTITIES), max_size=3, unique=True),
    st.sampled_from(list(MemoryType)),
    st.integers(0, 60),
), min_size=1, max_size=12)
queries_st = st.lists(st.tuples(
    st.sampled_from(NAMESPACES),
    st.lists(st.sampled_from(WORDS + tuple(MARKERS.values()) + ENTITIES), min_size=1, max_size=5).map(" ".join),
    st.sampled_from(PHRASES),
), min_size=1, max_size=4)


def build(spec: tuple) -> Memory:
    ns, mid, words, ents, mtype, days = spec
    text = " ".join([MARKERS[ns], *words, *ents, f"{ns}/{mid}"])
    return Memory(text=text, namespace=ns, id=f"{ns[:4]}-{mid}" if not mid.startswith("shared") else mid,
                  entities=tuple(ents), type=mtype,
                  event_at=NOW - timedelta(days=days) if mtype is MemoryType.EVENT else None)


@pytest.fixture(params=["embedded", pytest.param("cypher", marks=pytest.mark.slow), "connect"])  # a Bolt server
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryStore]:
    path = tmp_path_factory.mktemp("isolation")
    if request.param == "connect":  # qdrant-client local mode: the graph and BM25 in the collection's engine
        s = MemoryStore.connect(qdrant_location=str(path / "qdrant"), embedder=HashingEmbedder(dim=DIM), ner=False)
    else:
        s = (embedded(path) if request.param == "embedded"
             else with_cypher_graph(path, request.getfixturevalue("bolt_server")))
    s.open()
    yield s
    s.close()


def _arm_requests(store: MemoryStore, ns: str, text: str, phrase: str) -> list[tuple[str, ArmRequest]]:
    q = f"{text} {phrase}".strip()
    parsed = parse_query(q, now=NOW, matcher=store.entity_matcher(ns))
    # the graph arm also gets refs to every entity name, known in this namespace or not
    refs = tuple(EntityRef(e, (EntityCandidate(normalize_entity_id(e), e, 1.0),)) for e in ENTITIES)
    graph_q = parse_query(q, now=NOW)
    graph_q = type(graph_q)(**{**graph_q.__dict__, "entity_refs": refs})
    window = parsed.temporal_window or TimeWindow(NOW - timedelta(days=90), NOW)
    return [("dense", ArmRequest(parsed, ns, 50)),
            ("lexical", ArmRequest(parsed, ns, 50)),
            ("graph", ArmRequest(graph_q, ns, 50, max_hops=3)),
            ("temporal", ArmRequest(parsed, ns, 50, window=window)),
            ("type", ArmRequest(parsed, ns, 50, types=frozenset(MemoryType))),
            # the graph arm's hub form: every entity name, as a scope of its memories' payload names
            ("graph:scoped", ArmRequest(graph_q, ns, 50, scope=ENTITIES))]


def test_no_hit_ever_crosses_a_namespace(store: MemoryStore) -> None:
    model: dict[tuple[str, str], Memory] = {}
    ens = EnsembleMemory(store, optimizer=False)
    arms = {**{name: store.retriever(name) for name in ARMS}, "graph:scoped": ScopedGraphRetriever(store)}

    scoped_hits = [0]  # the scoped search must have answered at all for its check to mean anything

    def own_ids(ns: str) -> set[str]:
        return {mid for (n, mid) in model if n == ns}

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    @given(batch=memories_st, queries=queries_st, deletes=st.lists(st.integers(0, 10_000), max_size=3))
    def run(batch: list[tuple], queries: list[tuple[str, str, str]], deletes: list[int]) -> None:
        mems = [build(s) for s in batch]
        store.add(mems)
        for m in mems:
            model[(m.namespace, m.id)] = m
        for ns, text, phrase in queries:
            mine = own_ids(ns)
            foreign_markers = {v for k, v in MARKERS.items() if k != ns}
            for name, req in _arm_requests(store, ns, text, phrase):
                for h in arms[name].search(req):
                    scoped_hits[0] += name == "graph:scoped"
                    assert h.memory_id in mine, f"{name} arm in {ns!r} returned {h.memory_id!r}"
                    if h.memory is not None:
                        assert h.memory.namespace == ns and h.memory.text == model[(ns, h.memory_id)].text
            for marker in foreign_markers:
                assert lexical_ids(store, ns, marker, 50) == []
            result = ens.retrieve(f"{text} {phrase}".strip(), namespace=ns, k=20, now=NOW)
            assert not result.failures, result.failures
            for h in result.hits:
                assert h.memory.namespace == ns and h.memory.text == model[(ns, h.memory.id)].text
                assert not foreign_markers & set(h.memory.text.split())
        # deletes: one namespace at a time, the others must not move
        keys = sorted(model)
        for pick in deletes:
            if not keys:  # more deletes drawn than memories written: everything is already gone
                break
            ns, mid = keys[pick % len(keys)]
            others = {n: counts(store, n) for n in NAMESPACES if n != ns}
            twins = {n: model[(n, mid)] for n in NAMESPACES if n != ns and (n, mid) in model}
            store.delete(ns, [mid])
            del model[(ns, mid)]
            keys.remove((ns, mid))
            assert store.get_many(ns, [mid]) == []
            assert {n: counts(store, n) for n in others} == others
            for n, twin in twins.items():  # the same id in another namespace is untouched everywhere
                assert [m.text for m in store.get_many(n, [mid])] == [twin.text]
                assert mid in lexical_ids(store, n, f"{n}/{mid.removeprefix(n[:4] + '-')}", 50)
                if twin.entities:
                    assert store.graph is not None and store.graph.mentions_of(n, mid)
        for n in NAMESPACES:
            v, lex, g = counts(store, n)
            assert v == lex == g == len(own_ids(n)), (n, v, lex, g, len(own_ids(n)))

    try:
        run()
    finally:
        ens.close()
    assert scoped_hits[0] > 0
