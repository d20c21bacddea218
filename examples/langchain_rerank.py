"""A LangChain document compressor as the reranker behind `EnsembleMemoryRetriever`.

The reranker reorders the fused top of each retrieval, and keeps what a compressor placed after the
retriever (`ContextualCompressionRetriever`) would lose: every document still carries its fused
explanation, now with the rerank score and its rank before and after (`metadata["explain"]`), and a
reranker that raises, hangs past `FusionConfig.rerank_timeout_s` or answers garbage costs nothing
but its say: the fused order stands and `metadata["failed_arms"]` names "rerank".

Runs offline: the compressor here scores by a rule (the share of the question's content words a
memory shares). A real reranker plugs in the same way, as `reranker=`: `CohereRerank` (langchain-cohere),
`CrossEncoderReranker` with a `HuggingFaceCrossEncoder` (a bge or ms-marco cross-encoder),
`FlashrankRerank` (langchain-community), `LLMListwiseRerank`.

    python examples/langchain_rerank.py
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import Callbacks
from langchain_core.documents import BaseDocumentCompressor, Document

from fused_memory import MemoryStore
from fused_memory.demo import DEMO_NAMESPACE, DEMO_NOW, demo_memories
from langchain_fused_memory import EnsembleMemoryRetriever

__all__ = ["main", "QUESTION", "WordOverlapReranker", "BrokenReranker"]

QUESTION = "which Kestrel timeout is configured in production?"
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("a an the is are was what which who in on of to for my i do".split())


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower())) - _STOP


class WordOverlapReranker(BaseDocumentCompressor):
    """Scores each document by the share of the question's words it contains, and returns the best
    `top_n` with `metadata["relevance_score"]`, as CohereRerank and FlashrankRerank do."""

    top_n: int = 3

    def compress_documents(self, documents: Sequence[Document], query: str,
                           callbacks: Callbacks | None = None) -> Sequence[Document]:
        asked = _words(query)
        scored = [(len(asked & _words(d.page_content)) / max(1, len(asked)), d)
                  for d in documents]
        scored.sort(key=lambda sd: -sd[0])
        return [Document(page_content=d.page_content, metadata={**d.metadata, "relevance_score": s})
                for s, d in scored[:self.top_n]]


class BrokenReranker(BaseDocumentCompressor):
    """A reranker whose service is down."""

    def compress_documents(self, documents: Sequence[Document], query: str,
                           callbacks: Callbacks | None = None) -> Sequence[Document]:
        raise ConnectionError("rerank service unreachable")


def main(path: str | None = None, question: str = QUESTION) -> dict[str, Any]:
    """Retrieve with the reranker, then with a broken one for that call; print and return both."""
    with tempfile.TemporaryDirectory(prefix="fused-memory-example-") as tmp, MemoryStore.embedded(path or tmp) as store:
        store.add(demo_memories())
        retriever = EnsembleMemoryRetriever(store=store, namespace=DEMO_NAMESPACE, now=DEMO_NOW, k=3,
                                            reranker=WordOverlapReranker())
        reranked = retriever.invoke(question)
        unranked = retriever.invoke(question, reranker=BrokenReranker())  # per call: fault isolated
    print("reranked:")
    for d in reranked:
        print(f"  {d.metadata['rank']}. {d.page_content}\n     {d.metadata['explain']}")
    print("\nwith the reranker down, the fused order:")
    for d in unranked:
        print(f"  {d.metadata['rank']}. {d.page_content}")
    print(f"  failed: {unranked[0].metadata['failed_arms']}")
    return {"reranked": reranked, "unranked": unranked}


if __name__ == "__main__":
    main()
