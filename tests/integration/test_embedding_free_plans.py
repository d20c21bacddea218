"""Plans that need no query embedding (`query.shortcuts`): a query that is only a time, identifiers or
names is answered without embedding it and without a vector search; when the shortcut finds nothing,
the full plan runs (and embeds). Sync and async alike; `optimizer=False` still runs everything.

Real store (qdrant-edge, BM25, embedded graph, spaCy NER at ingest), the real MiniLM embedder
behind a wrapper that counts the embeddings asked of it, the demo's memories and clock."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pytest

from fused_memory.demo import DEMO_NAMESPACE as NS
from fused_memory.demo import DEMO_NOW, demo_memories
from fused_memory.embeddings import EmbedderId, default_embedder
from fused_memory.ensemble import EnsembleMemory
from fused_memory.results import Retrieval
from fused_memory.store.memory_store import MemoryStore
from fused_memory.types import MemoryType


class CountingEmbedder:
    """The default embedder, counting the query embeddings asked of it (documents are ingest's)."""

    def __init__(self) -> None:
        self.inner = default_embedder()
        self.queries: list[str] = []

    @property
    def id(self) -> EmbedderId:
        return self.inner.id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        self.queries.append(text)
        return self.inner.embed_query(text)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[MemoryStore, CountingEmbedder]]:
    emb = CountingEmbedder()
    store = MemoryStore.embedded(tmp_path_factory.mktemp("shortcuts") / "store", embedder=emb)  # NER on
    store.add(demo_memories())
    yield store, emb
    store.close()


@pytest.fixture
def ens(demo: tuple[MemoryStore, CountingEmbedder]) -> Iterator[EnsembleMemory]:
    e = EnsembleMemory(demo[0])
    yield e
    e.close()


@pytest.fixture(params=["sync", "async"])
def ask(request: pytest.FixtureRequest, demo: tuple[MemoryStore, CountingEmbedder]) -> Any:
    """retrieve or aretrieve, returning (the retrieval, how many query embeddings it made)."""
    emb = demo[1]

    def run(e: EnsembleMemory, query: str, **kw: Any) -> tuple[Retrieval, int]:
        emb.inner.cache.clear()
        emb.queries.clear()
        if request.param == "sync":
            r = e.retrieve(query, namespace=NS, k=5, now=DEMO_NOW, **kw)
        else:
            r = asyncio.run(e.aretrieve(query, namespace=NS, k=5, now=DEMO_NOW, **kw))
        return r, len(emb.queries)
    return run


def test_only_a_time_reads_the_window_newest_first_without_embedding(ens: EnsembleMemory, ask: Any) -> None:
    r, embedded = ask(ens, "what did I do last week?")
    assert embedded == 0 and r.plan.shortcut == "time" and r.plan.arms == ("temporal",)
    assert "time_shortcut" in r.plan.reasons[-1] and "dense" in r.plan.skipped
    window = r.parsed.temporal_window
    events = sorted((m for m in demo_memories() if m.type is MemoryType.EVENT and m.event_at is not None
                     and window.start <= m.event_at <= window.end), key=lambda m: m.event_at, reverse=True)
    assert len(events) >= 2
    assert [h.memory.text for h in r.hits] == [m.text for m in events[:5]]  # the window's events, newest first
    assert all("newest first" in (h.contributions[0].detail or "") for h in r.hits)


def test_a_time_question_never_answers_empty_while_memories_exist(ens: EnsembleMemory, ask: Any) -> None:
    """Nothing happened then: the other arms answer, the memories nearest the window first, and the
    plan says so (an answer of nothing read as "I don't remember anything")."""
    r, embedded = ask(ens, "what happened on 1 January 2020?")
    assert embedded == 1 and r.plan.shortcut is None and r.plan.soft_window > 0 and r.hits and not r.failures
    assert "temporal" not in r.plan.arms and "holds no memory" in r.plan.skipped["temporal"]
    assert any(why.startswith("time plan: the window holds no memory -> the full plan") for why in r.plan.reasons)
    first = [c for c in r.hits[0].contributions if c.arm == "near window"]
    assert first and first[0].rank == 1  # nothing is nearer 2020 than the first hit


class NoScan:
    """A vector backend that cannot scan in payload order (not an `OrderedScan`: a custom one);
    every other call goes to the real backend."""

    def __init__(self, vectors: Any) -> None:
        self._vectors = vectors

    def __getattr__(self, name: str) -> Any:
        if name == "scan_ordered":
            raise AttributeError(name)
        return getattr(self._vectors, name)


@pytest.fixture
def no_scan(demo: tuple[MemoryStore, CountingEmbedder]) -> Iterator[EnsembleMemory]:
    """An ensemble over the demo store whose vector backend has no ordered scan, for one test."""
    store = demo[0]
    vectors = store.vectors
    store.vectors = NoScan(vectors)  # type: ignore[assignment]
    e = EnsembleMemory(store)
    yield e
    store.vectors = vectors
    e.close()


def test_a_time_plan_whose_scan_fails_falls_back_to_the_full_plan(no_scan: EnsembleMemory, ask: Any) -> None:
    """The time plan's arm fails on a backend without an ordered scan; the full plan answers, with
    its embedding."""
    r, embedded = ask(no_scan, "what did I do last week?")
    assert embedded == 1 and r.plan.shortcut is None and r.plan.arms == ("dense", "temporal") and r.hits
    assert r.plan.reasons[-1].startswith("time plan: temporal failed (BackendError: the vector backend NoScan "
                                         "cannot scan in payload order) -> the full plan")
    # the time plan's failure is reported (and logged) as the shortcut's: the full plan's temporal arm answered
    assert [(f.arm, f.kind) for f in r.failures] == [("temporal", "shortcut")]
    assert r.failures[0].reason.endswith("(in the time plan; the full plan answered)")


def test_a_failed_shortcut_does_not_make_an_empty_answer_incomplete(no_scan: EnsembleMemory) -> None:
    """Nothing in an empty namespace, though the time plan's scan failed first: the full plan ran
    every arm, so the adapters hand over "no memories", not an incomplete search."""
    from fused_memory.adapters import answered, arm_reports

    r = no_scan.retrieve("what did I do last week?", namespace="nobody", k=5, now=DEMO_NOW)
    assert r.hits == () and [f.kind for f in r.failures] == ["shortcut"]
    assert answered(r) is r
    [temporal] = [a for a in arm_reports(r) if a.arm == "temporal"]
    assert temporal.partial and "shortcut" in (temporal.error or "")


def test_an_identifier_is_looked_up_by_bm25_alone(ens: EnsembleMemory, ask: Any) -> None:
    for query, ident in (("E-47821", "E-47821"), ("what was JIRA-9921 about?", "JIRA-9921")):
        r, embedded = ask(ens, query)
        assert embedded == 0 and r.plan.shortcut == "identifier" and r.plan.arms == ("lexical",), query
        assert ident in r.hits[0].memory.text


def test_an_identifier_no_memory_holds_falls_back_to_the_full_plan(ens: EnsembleMemory, ask: Any) -> None:
    """BM25 finds other JIRA tickets for JIRA-1 (the token "jira"), but none holds JIRA-1 itself."""
    r, embedded = ask(ens, "JIRA-1")
    assert embedded == 1 and r.plan.shortcut is None and r.plan.arms[:2] == ("dense", "lexical")
    assert r.plan.reasons[-1] == "identifier plan: no memory found holds jira-1 -> the full plan"


def test_only_names_are_answered_by_the_graph_and_bm25(ens: EnsembleMemory, ask: Any) -> None:
    for query in ("Sarah Chen", "tell me about Sarah Chen"):
        r, embedded = ask(ens, query)
        assert embedded == 0 and r.plan.shortcut == "name" and r.plan.arms == ("lexical", "graph"), query
        assert all("Sarah" in h.memory.text for h in r.hits[:3]), [h.memory.text for h in r.hits]


def test_a_name_plan_whose_arm_fails_falls_back_to_the_full_plan(demo: tuple[MemoryStore, CountingEmbedder],
                                                                  ask: Any) -> None:
    store = demo[0]
    graph = store.graph
    assert graph is not None

    class Broken:  # the graph walk fails once; everything else is the real graph
        failed = 0

        def __getattr__(self, name: str) -> Any:
            return getattr(graph, name)

        def traverse(self, *a: Any, **kw: Any) -> Any:
            if not Broken.failed:
                Broken.failed += 1
                raise ConnectionError("graph went away")
            return graph.traverse(*a, **kw)

    store.graph = Broken()  # type: ignore[assignment]
    e = EnsembleMemory(store)
    try:
        r, embedded = ask(e, "Sarah Chen")
    finally:
        store.graph = graph
        e.close()
    assert embedded == 1 and r.plan.shortcut is None and "dense" in r.plan.arms and r.hits
    assert r.plan.reasons[-1].startswith("name plan: graph failed (BackendError: graph arm failed: graph went away")
    assert [(f.arm, f.kind) for f in r.failures] == [("graph", "shortcut")]
    assert "graph went away" in r.failures[0].reason


def test_a_topical_query_embeds_as_before(ens: EnsembleMemory, ask: Any) -> None:
    r, embedded = ask(ens, "what does the payments service run?")
    assert embedded == 1 and r.plan.shortcut is None and r.plan.fallback is None and "dense" in r.plan.arms


@pytest.mark.parametrize("query", ["what did I do last week?", "E-47821", "Sarah Chen"])
def test_optimizer_off_and_caller_options_run_the_full_plan(demo: tuple[MemoryStore, CountingEmbedder], ask: Any,
                                                            query: str) -> None:
    off = EnsembleMemory(demo[0], optimizer=False)
    on = EnsembleMemory(demo[0])
    try:
        r, embedded = ask(off, query)
        assert embedded == 1 and r.plan.shortcut is None and "dense" in r.plan.arms and len(r.plan.arms) >= 2
        for options in ({"arms": ["dense", "lexical"]}, {"types": ["event", "fact"]}, {"embed_text": query}):
            r, embedded = ask(on, query, **options)
            assert embedded == 1 and r.plan.shortcut is None, options
            assert any(x.startswith("caller options -> the full plan, not the") for x in r.plan.reasons), options
    finally:
        off.close()
        on.close()


def test_plan_shows_the_shortcut_and_its_fallback(ens: EnsembleMemory) -> None:
    _, plan = ens.plan("E-47821", namespace=NS, now=DEMO_NOW)
    assert plan.shortcut == "identifier" and plan.fallback is not None and "dense" in plan.fallback.arms
    assert plan.to_json()["shortcut"] == "identifier"


class Reversed:
    """A reranker that prefers the fused order's last: the final order shows it ran."""

    def __init__(self) -> None:
        self.calls = 0

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        self.calls += 1
        return [float(i) for i in range(len(texts))]


def test_a_plan_that_needs_no_embedding_still_goes_through_the_stage_after_fusion(
        tmp_path: Any, ask: Any) -> None:
    """The identifier plan runs BM25 alone because the optimizer chose it, not the caller: repeated
    saves still collapse, a newer version still supersedes, and the ensemble's reranker still runs."""
    from datetime import timedelta

    from fused_memory import Memory

    store = MemoryStore.embedded(tmp_path / "s", ner=False)
    old, new = DEMO_NOW - timedelta(days=200), DEMO_NOW - timedelta(days=1)
    store.add([Memory(text="JIRA-9921 deploy failed on staging", namespace=NS, id="a", created_at=old),
               Memory(text="jira-9921: deploy failed on staging!", namespace=NS, id="b", created_at=new),
               Memory(text="JIRA-9921 postmortem is due Friday", namespace=NS, id="c", created_at=new),
               Memory(text="lunch with Tom at noon", namespace=NS, id="d", created_at=new)])
    rerank = Reversed()
    e = EnsembleMemory(store, reranker=rerank)
    try:
        r, _ = ask(e, "JIRA-9921")
    finally:
        e.close()
        store.close()
    assert r.plan.shortcut == "identifier" and rerank.calls == 1
    assert sorted(r.ids()) == ["b", "c"]  # "a" collapsed into its newer copy
    copy = r.hits[r.ids().index("b")]
    assert copy.collapsed == ("a",) and copy.rerank_score is not None


def test_a_custom_arm_named_lexical_serves_the_identifier_plan(demo: tuple[MemoryStore, CountingEmbedder],
                                                              ask: Any) -> None:
    """The check reads the memories of whatever answered as "lexical", so a caller's own BM25 does
    not send every identifier query to the full plan."""
    from fused_memory.retrievers import LexicalRetriever

    e = EnsembleMemory(demo[0], arms={"lexical": LexicalRetriever(demo[0])})
    try:
        r, embedded = ask(e, "E-47821")
    finally:
        e.close()
    assert embedded == 0 and r.plan.shortcut == "identifier" and "E-47821" in r.hits[0].memory.text
