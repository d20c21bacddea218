"""The LlamaIndex retrievers' own standard suite (the equivalent of langchain-tests'): for all six
classes, `retrieve` / `aretrieve` return `NodeWithScore`s of `TextNode`s, `k` is respected, the
base class's callback and instrumentation events fire, and `aretrieve` leaves the event loop free
(a ticker task keeps ticking while it runs; a control that blocks proves the check can fail)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from llama_index.core.callbacks import CallbackManager, CBEventType, LlamaDebugHandler
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events.retrieval import RetrievalEndEvent, RetrievalStartEvent
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, TextNode

import llama_index.retrievers.fused_memory as li
from fused_memory.adapters import RETRIEVAL_KEYS
from fused_memory.ensemble import EnsembleMemory
from fused_memory.results import ARMS, Hit
from fused_memory.store.memory_store import MemoryStore

from ._seed import ARMS_BY_CLASS, NOW, NS, QUERY

CLASSES = sorted(ARMS_BY_CLASS)


def _make(name: str, store: MemoryStore | EnsembleMemory, **kw: Any) -> li.FusedMemoryRetriever:
    return getattr(li, name)(store, namespace=NS, now=NOW, **kw)


def _check_nodes(nodes: list[NodeWithScore], k: int) -> None:
    assert isinstance(nodes, list) and len(nodes) == k
    for n in nodes:
        assert isinstance(n, NodeWithScore) and isinstance(n.node, TextNode)
        assert n.node.node_id == n.node.metadata["memory_id"] and n.node.text
        assert isinstance(n.score, float) and n.score > 0
        json.dumps(n.node.metadata, allow_nan=False)
    assert [n.node.metadata["rank"] for n in nodes] == list(range(1, k + 1))


@pytest.mark.parametrize("name", CLASSES)
@pytest.mark.parametrize("k", [1, 3])
def test_retrieve_returns_k_nodes(name: str, k: int, seeded_store: MemoryStore) -> None:
    _check_nodes(_make(name, seeded_store, k=k).retrieve(QUERY), k)


@pytest.mark.parametrize("name", CLASSES)
@pytest.mark.parametrize("k", [1, 3])
async def test_aretrieve_returns_k_nodes(name: str, k: int, seeded_store: MemoryStore) -> None:
    _check_nodes(await _make(name, seeded_store, k=k).aretrieve(QUERY), k)


@pytest.mark.parametrize("name", CLASSES)
def test_k_and_namespace_are_attributes(name: str, seeded_store: MemoryStore) -> None:
    retriever = _make(name, seeded_store, k=3)
    assert len(retriever.retrieve(QueryBundle(QUERY))) == 3
    retriever.k = 2
    assert len(retriever.retrieve(QUERY)) == 2


def test_single_arm_classes_use_their_arm(seeded_store: MemoryStore) -> None:
    for name, arm in ARMS_BY_CLASS.items():
        nodes = _make(name, seeded_store, k=3).retrieve(QUERY)
        assert nodes
        for n in nodes:
            assert set(n.node.metadata["arms"]) <= set(ARMS)
            if arm is not None:
                assert n.node.metadata["arms"] == [arm]


def test_bookkeeping_stays_out_of_the_prompt(seeded_store: MemoryStore) -> None:
    [node] = _make("EnsembleMemoryRetriever", seeded_store, k=1).retrieve(QUERY)
    llm_text = node.node.get_content(MetadataMode.LLM)
    assert node.node.text in llm_text
    assert "contributions" not in llm_text and "explain" not in llm_text
    kind = node.node.metadata["type"]  # the top memory's own type (which one is first is the order's business)
    assert kind in {"event", "fact"} and f"type: {kind}" in llm_text, "what the memory is stays visible to the LLM"


class _Collect(BaseEventHandler):
    events: list[Any] = []

    def handle(self, event: Any, **kwargs: Any) -> None:
        self.events.append(event)


@pytest.mark.parametrize("use_async", [False, True])
async def test_callback_and_instrumentation_events_fire(use_async: bool, seeded_store: MemoryStore) -> None:
    debug = LlamaDebugHandler()
    retriever = li.EnsembleMemoryRetriever(seeded_store, namespace=NS, now=NOW, k=3,
                                           callback_manager=CallbackManager([debug]))
    collect = _Collect(events=[])
    root = get_dispatcher()
    root.add_event_handler(collect)
    try:
        nodes = await retriever.aretrieve(QUERY) if use_async else retriever.retrieve(QUERY)
    finally:
        root.event_handlers.remove(collect)
    [(start, end)] = debug.get_event_pairs(CBEventType.RETRIEVE)
    assert end.payload["nodes"] == nodes
    [started] = [e for e in collect.events if isinstance(e, RetrievalStartEvent)]
    [ended] = [e for e in collect.events if isinstance(e, RetrievalEndEvent)]
    assert started.str_or_query_bundle == QUERY and ended.nodes == nodes


class _Slow:
    """Wraps an arm and makes it take `delay` seconds: long enough to see whether the loop runs."""

    def __init__(self, inner: Any, delay: float) -> None:
        self.inner, self.name, self.delay = inner, inner.name, delay

    def search(self, request: Any) -> list[Hit]:
        time.sleep(self.delay)
        return self.inner.search(request)


@pytest.fixture(scope="module")
def slow_ensemble(seeded_store: MemoryStore) -> Any:
    ens = EnsembleMemory(seeded_store, arms={a: _Slow(seeded_store.retriever(a), 0.25) for a in ARMS})
    yield ens
    ens.close()


async def _ticks_during(call: Any) -> tuple[int, Any]:
    ticks = 0
    stop = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0.005)

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0.02)
    before = ticks
    result = await call()
    during = ticks - before
    stop.set()
    await task
    return during, result


@pytest.mark.parametrize("name", CLASSES)
async def test_aretrieve_does_not_block_the_loop(name: str, slow_ensemble: EnsembleMemory) -> None:
    retriever = _make(name, slow_ensemble, k=3)
    during, nodes = await _ticks_during(lambda: retriever.aretrieve(QUERY))
    assert len(nodes) == 3
    assert during >= 10, f"the event loop ticked only {during} times during a >= 250 ms retrieval"


async def test_the_ticker_detects_a_blocking_aretrieve(slow_ensemble: EnsembleMemory) -> None:
    class Blocking(li.DenseMemoryRetriever):
        async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
            return self._retrieve(query_bundle)  # what the base class does by default

    blocking = Blocking(slow_ensemble, namespace=NS, now=NOW, k=3)
    during, _ = await _ticks_during(lambda: blocking.aretrieve(QUERY))
    assert during <= 1


def test_memory_tool_is_a_retriever_tool(seeded_store: MemoryStore) -> None:
    from llama_index.core.tools import RetrieverTool

    retriever = li.EnsembleMemoryRetriever(seeded_store, namespace=NS, now=NOW, k=3)
    tool = li.memory_tool(retriever, "recall", "Search the user's memories.")
    assert isinstance(tool, RetrieverTool) and tool.metadata.name == "recall"
    output = tool.call(QUERY)
    nodes = output.raw_output
    assert [n.node.node_id for n in nodes] == [n.node.node_id for n in retriever.retrieve(QUERY + "\n")]
    assert nodes[0].node.text in output.content


def test_one_memory_has_one_hash_whichever_retriever_found_it(seeded_store: MemoryStore) -> None:
    """LlamaIndex's QueryFusionRetriever fuses by `node.hash`; the hash covered this retrieval's
    score and explanation, so dense's and BM25's copies of one memory never summed their ranks
    and "simple" mode returned fewer nodes than asked."""
    from llama_index.core.llms import MockLLM
    from llama_index.core.retrievers import QueryFusionRetriever

    dense = li.DenseMemoryRetriever(seeded_store, namespace=NS, now=NOW, k=3)
    bm25 = li.BM25MemoryRetriever(seeded_store, namespace=NS, now=NOW, k=3)
    question = "when did we fix JIRA-9921?"
    by_dense, by_bm25 = ({n.node.node_id: n.node for n in r.retrieve(question)} for r in (dense, bm25))
    both = set(by_dense) & set(by_bm25)
    assert both, "the question needs a memory both arms find"
    for mid in both:
        assert by_dense[mid].metadata["score"] != by_bm25[mid].metadata["score"]
        assert by_dense[mid].hash == by_bm25[mid].hash
    assert len({n.hash for n in by_dense.values()}) == len(by_dense)  # distinct texts stay distinct
    assert set(hit_metadata_keys(seeded_store)) == set(RETRIEVAL_KEYS)
    assert TextNode.from_dict(next(iter(by_dense.values())).to_dict()).text  # serializes as a TextNode
    # (read back as a plain TextNode, its hash is TextNode's again: a docstore sees it as changed)

    fused = QueryFusionRetriever([dense, bm25], llm=MockLLM(), num_queries=1, mode="reciprocal_rerank",
                                 similarity_top_k=3, use_async=False).retrieve(question)
    rank = {r: {mid: i for i, mid in enumerate(found)} for r, found in (("d", list(by_dense)), ("b", list(by_bm25)))}
    want = {mid: sum(1.0 / (60 + ranks[mid]) for ranks in rank.values() if mid in ranks)
            for mid in set(by_dense) | set(by_bm25)}
    assert [n.node.node_id for n in fused] == sorted(want, key=lambda m: -want[m])[:3]
    assert [n.score for n in fused] == pytest.approx(sorted(want.values(), reverse=True)[:3])
    simple = QueryFusionRetriever([dense, bm25], llm=MockLLM(), num_queries=1, mode="simple",
                                  similarity_top_k=3, use_async=False).retrieve(question)
    assert len({n.node.node_id for n in simple}) == 3


def hit_metadata_keys(store: MemoryStore) -> list[str]:
    """Every key `hit_metadata` writes that is not the memory's own: RETRIEVAL_KEYS must name them
    all, or a new per-retrieval key would slip into `MemoryNode.hash`."""
    from fused_memory.adapters import hit_metadata

    ens = EnsembleMemory(store)
    r = ens.retrieve(QUERY, namespace=NS, k=1, now=NOW)
    ens.close()
    memory_keys = set(r.hits[0].to_json()["memory"]) | {"memory_id"}
    return [k for k in hit_metadata(r.hits[0], r) if k not in memory_keys]


def test_a_one_arm_retrievers_node_score_is_its_own_similarity(seeded_store: MemoryStore) -> None:
    """`SimilarityPostprocessor(similarity_cutoff=0.5)` dropped every node: a one-arm retriever's
    node carried the fused score (0.12 for a 0.77 cosine). It now carries the arm's own score; the
    fused score stays in the metadata, and the ensemble's nodes keep the fused score."""
    from llama_index.core.postprocessor import SimilarityPostprocessor

    question = "what's my badge ID?"
    ens = EnsembleMemory(seeded_store)
    try:
        want = ens.retrieve(question, namespace=NS, k=5, now=NOW, arms=["dense"])
    finally:
        ens.close()
    nodes = li.DenseMemoryRetriever(seeded_store, namespace=NS, now=NOW, k=5).retrieve(question)
    cosines = [h.contributions[0].raw_score for h in want.hits]
    assert [n.score for n in nodes] == pytest.approx(cosines)
    assert [n.node.metadata["score"] for n in nodes] == pytest.approx([h.score for h in want.hits])
    kept = SimilarityPostprocessor(similarity_cutoff=0.5).postprocess_nodes(nodes)
    assert kept
    assert [n.node.node_id for n in kept] == [h.memory.id for h, c in zip(want.hits, cosines, strict=True) if c >= 0.5]
    fused = li.EnsembleMemoryRetriever(seeded_store, namespace=NS, now=NOW, k=5).retrieve(question)
    assert [n.score for n in fused] == pytest.approx([n.node.metadata["score"] for n in fused])


def test_re_adding_an_unchanged_memory_keeps_its_hash(tmp_path: Any) -> None:
    """Re-adding stamps a new `created_at`; the hash (what docstores and ingestion pipelines use to
    tell a changed document) must stay the memory's."""
    from fused_memory.embeddings.hashing import HashingEmbedder
    from fused_memory.types import Memory

    store = MemoryStore.embedded(tmp_path / "s", embedder=HashingEmbedder(dim=64), ner=False)
    memory = Memory(text="My badge ID is E-47821", namespace="h")
    try:
        retriever = li.BM25MemoryRetriever(store, namespace="h", now=NOW)
        store.add([memory])
        [first] = retriever.retrieve("badge ID")
        time.sleep(0.01)
        store.add([memory])
        [again] = retriever.retrieve("badge ID")
        assert again.node.metadata["created_at"] != first.node.metadata["created_at"]
        assert again.node.hash == first.node.hash
    finally:
        store.close()
