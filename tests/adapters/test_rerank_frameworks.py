"""Framework rerankers behind the fused retrievers: a LangChain `BaseDocumentCompressor` and a
LlamaIndex `BaseNodePostprocessor` (real subclasses of the frameworks' classes that score by a rule,
as the examples' do) order the fused top, in sync and async, as a retriever field, per call and
through the agent tools. One that raises, hangs past its timeout or answers garbage (documents it
was not given, one twice, NaN scores) never fails a query or loses a hit: the fused order stands and
the metadata names "rerank" as failed."""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Iterator, Sequence

import pytest
from langchain_core.documents import BaseDocumentCompressor, Document
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from fused_memory import EnsembleMemory, FusionConfig
from fused_memory.rerank import LangChainReranker, LlamaIndexReranker, as_reranker
from langchain_fused_memory import EnsembleMemoryRetriever as LCRetriever
from langchain_fused_memory import memory_tool as lc_tool
from llama_index.retrievers.fused_memory import EnsembleMemoryRetriever as LIRetriever
from llama_index.retrievers.fused_memory import memory_tool as li_tool

from ._seed import NOW, NS

QUESTION = "what's my setting for the Kestrel project timeout?"
TIMEOUT = 0.4


@pytest.fixture(scope="module")
def ensemble(seeded_store) -> Iterator[EnsembleMemory]:
    ens = EnsembleMemory(seeded_store, FusionConfig(rerank_timeout_s=TIMEOUT))
    yield ens
    ens.close()


# ------------------------------------------------------------------ LangChain compressors
class ByLength(BaseDocumentCompressor):
    """Shortest text first, with `relevance_score` (as CohereRerank and FlashrankRerank write it)."""

    top_n: int = 50
    scored: bool = True

    def compress_documents(self, documents: Sequence[Document], query: str, callbacks=None) -> Sequence[Document]:
        ranked = sorted(documents, key=lambda d: len(d.page_content))[:self.top_n]
        if not self.scored:  # sorted, no scores: as CrossEncoderReranker returns them
            return ranked
        return [Document(page_content=d.page_content,
                         metadata={**d.metadata, "relevance_score": 1 / len(d.page_content)}) for d in ranked]


class LCBroken(BaseDocumentCompressor):
    mode: str

    def compress_documents(self, documents: Sequence[Document], query: str, callbacks=None) -> Sequence[Document]:
        if self.mode == "raises":
            raise ConnectionError("rerank service unreachable")
        if self.mode == "hangs":
            HANG.wait(30)
            return list(documents)
        if self.mode == "foreign":
            return [Document(page_content="an invented memory")]
        if self.mode == "twice":
            return [documents[0], documents[0]]
        if self.mode == "nan":
            return [Document(page_content=d.page_content, metadata={**d.metadata, "relevance_score": math.nan})
                    for d in documents]
        raise AssertionError(self.mode)


HANG = threading.Event()
BROKEN = ("raises", "hangs", "foreign", "twice", "nan")


@pytest.fixture
def released() -> Iterator[None]:
    HANG.clear()
    yield
    HANG.set()  # hung calls return; the ensemble calls the reranker again once they have


def _wait_unhung(call) -> None:
    """Until the hung reranker call of an earlier test has returned (it holds the name "rerank")."""
    for _ in range(100):
        if not any(f.arm == "rerank" and "not called" in f.reason for f in call()):
            return
        threading.Event().wait(0.05)


def _lc(ensemble: EnsembleMemory, **kw) -> LCRetriever:
    return LCRetriever(ensemble=ensemble, namespace=NS, now=NOW, k=5, **kw)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_compressor_orders_the_fused_top(ensemble, mode):
    retriever = _lc(ensemble, reranker=ByLength())
    docs = retriever.invoke(QUESTION) if mode == "sync" else asyncio.run(retriever.ainvoke(QUESTION))
    lengths = [len(d.page_content) for d in docs]
    assert lengths == sorted(lengths) and all(d.metadata["rerank_score"] is not None for d in docs)
    assert docs[0].metadata["reranked_by"] == "langchain:ByLength"
    assert "-> #1" in docs[0].metadata["explain"] and not docs[0].metadata["failed_arms"]


def test_a_compressor_without_scores_or_with_top_n_still_orders(ensemble):
    docs = _lc(ensemble, reranker=ByLength(scored=False, top_n=2)).invoke(QUESTION)
    lengths = [len(d.page_content) for d in docs]
    assert lengths[:2] == sorted(lengths)[:2] and len(docs) == 5  # what it left out ranks after
    assert [d.metadata["rerank_score"] for d in docs][:2] == [1.0, 0.5]


def test_a_per_call_compressor_and_the_fields_default(ensemble):
    retriever = _lc(ensemble)
    fused = retriever.invoke(QUESTION)
    assert all(d.metadata["rerank_score"] is None for d in fused)
    reranked = retriever.invoke(QUESTION, reranker=ByLength())
    assert [len(d.page_content) for d in reranked] == sorted(len(d.page_content) for d in reranked)
    with pytest.raises(Exception, match="reranker"):
        _lc(ensemble, reranker="cohere")


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("broken", BROKEN)
def test_a_broken_compressor_keeps_the_fused_documents(ensemble, released, mode, broken):
    plain = _lc(ensemble)
    _wait_unhung(lambda: ensemble.retrieve(QUESTION, namespace=NS, now=NOW, k=5, reranker=ByLength()).failures)
    fused = plain.invoke(QUESTION)
    retriever = _lc(ensemble, reranker=LCBroken(mode=broken))
    docs = retriever.invoke(QUESTION) if mode == "sync" else asyncio.run(retriever.ainvoke(QUESTION))
    assert [d.id for d in docs] == [d.id for d in fused]
    failed = docs[0].metadata["failed_arms"]
    assert set(failed) == {"rerank"} and failed["rerank"].startswith("timeout" if broken == "hangs" else "error")


def test_the_langchain_tool_shows_the_reranked_order(ensemble, released):
    _wait_unhung(lambda: ensemble.retrieve(QUESTION, namespace=NS, now=NOW, k=5, reranker=ByLength()).failures)
    tool = lc_tool(_lc(ensemble, reranker=ByLength()))
    content, artifact = tool.func(QUESTION)
    assert content.split("\n\n")[0].endswith(artifact[0].page_content)
    assert [len(d.page_content) for d in artifact] == sorted(len(d.page_content) for d in artifact)
    broken = lc_tool(_lc(ensemble, reranker=LCBroken(mode="raises")))
    content, artifact = asyncio.run(broken.coroutine(QUESTION))
    assert artifact and "rerank" in artifact[0].metadata["failed_arms"]


# ------------------------------------------------------------------ LlamaIndex postprocessors
class LIByLength(BaseNodePostprocessor):
    top_n: int = 50

    def _postprocess_nodes(self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
                           ) -> list[NodeWithScore]:
        for n in nodes:
            n.score = 1 / len(n.node.get_content())
        return sorted(nodes, key=lambda n: -(n.score or 0))[:self.top_n]


class LIBroken(BaseNodePostprocessor):
    mode: str

    def _postprocess_nodes(self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
                           ) -> list[NodeWithScore]:
        if self.mode == "raises":
            raise ConnectionError("rerank service unreachable")
        if self.mode == "hangs":
            HANG.wait(30)
            return nodes
        if self.mode == "foreign":
            return [NodeWithScore(node=TextNode(text="an invented memory"), score=1.0)]
        if self.mode == "twice":
            return [nodes[0], nodes[0]]
        if self.mode == "nan":
            return [NodeWithScore(node=n.node, score=math.nan) for n in nodes]
        raise AssertionError(self.mode)


def _li(ensemble: EnsembleMemory, **kw) -> LIRetriever:
    return LIRetriever(ensemble=ensemble, namespace=NS, now=NOW, k=5, **kw)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_postprocessor_orders_the_fused_top(ensemble, mode):
    retriever = _li(ensemble, reranker=LIByLength())
    nodes = retriever.retrieve(QUESTION) if mode == "sync" else asyncio.run(retriever.aretrieve(QUESTION))
    lengths = [len(n.node.text) for n in nodes]
    assert lengths == sorted(lengths) and nodes[0].node.metadata["reranked_by"] == "llamaindex:LIByLength"
    assert nodes[0].node.metadata["rank_before_rerank"] is not None


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("broken", BROKEN)
def test_a_broken_postprocessor_keeps_the_fused_nodes(ensemble, released, mode, broken):
    _wait_unhung(lambda: ensemble.retrieve(QUESTION, namespace=NS, now=NOW, k=5, reranker=ByLength()).failures)
    fused = _li(ensemble).retrieve(QUESTION)
    retriever = _li(ensemble, reranker=LIBroken(mode=broken))
    nodes = retriever.retrieve(QUESTION) if mode == "sync" else asyncio.run(retriever.aretrieve(QUESTION))
    assert [n.node.node_id for n in nodes] == [n.node.node_id for n in fused]
    failed = nodes[0].node.metadata["failed_arms"]
    assert set(failed) == {"rerank"} and failed["rerank"].startswith("timeout" if broken == "hangs" else "error")


def test_the_llamaindex_tool_shows_the_reranked_order(ensemble, released):
    _wait_unhung(lambda: ensemble.retrieve(QUESTION, namespace=NS, now=NOW, k=5, reranker=ByLength()).failures)
    out = li_tool(_li(ensemble, reranker=LIByLength())).call(input=QUESTION)
    texts = [n.node.text for n in out.raw_output]
    assert [len(t) for t in texts] == sorted(len(t) for t in texts) and out.content.split("\n\n")[0].endswith(texts[0])


def test_either_frameworks_reranker_works_in_the_others_retriever(ensemble, released):
    _wait_unhung(lambda: ensemble.retrieve(QUESTION, namespace=NS, now=NOW, k=5, reranker=ByLength()).failures)
    assert isinstance(as_reranker(ByLength()), LangChainReranker)
    assert isinstance(as_reranker(LIByLength()), LlamaIndexReranker)
    nodes = _li(ensemble, reranker=ByLength()).retrieve(QUESTION)
    assert [len(n.node.text) for n in nodes] == sorted(len(n.node.text) for n in nodes)
