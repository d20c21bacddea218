"""A LlamaIndex node postprocessor as the reranker behind `EnsembleMemoryRetriever`.

Given to the retriever (`reranker=`) rather than to a query engine's `node_postprocessors`, the
reranker reorders the fused top of each retrieval and keeps the fused explanation (each node's
`metadata["explain"]` shows the rerank score and the rank before and after) and the arms' fault
isolation: a postprocessor that raises, hangs past `FusionConfig.rerank_timeout_s` or answers garbage
leaves the fused order, and `metadata["failed_arms"]` names "rerank".

Runs offline: the postprocessor here scores by a rule (the share of the question's content words a
memory shares) and LlamaIndex's `MockLLM` answers with its prompt. A real reranker plugs in the same way:
`SentenceTransformerRerank` (a bge or ms-marco cross-encoder), `LLMRerank`, `CohereRerank`
(llama-index-postprocessor-cohere-rerank), `FlagEmbeddingReranker`.

    python examples/llamaindex_rerank.py
"""

from __future__ import annotations

import re
import tempfile
from typing import Any

from llama_index.core.llms import MockLLM
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import NodeWithScore, QueryBundle

from fused_memory import MemoryStore
from fused_memory.demo import DEMO_NAMESPACE, DEMO_NOW, demo_memories
from llama_index.retrievers.fused_memory import EnsembleMemoryRetriever

__all__ = ["main", "QUESTION", "WordOverlapRerank"]

QUESTION = "which Kestrel timeout is configured in production?"
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("a an the is are was what which who in on of to for my i do".split())


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower())) - _STOP


class WordOverlapRerank(BaseNodePostprocessor):
    """Sets each node's score to the share of the question's words it contains and keeps the best
    `top_n`, as SentenceTransformerRerank does with a cross-encoder's score."""

    top_n: int = 3

    def _postprocess_nodes(self, nodes: list[NodeWithScore],
                           query_bundle: QueryBundle | None = None) -> list[NodeWithScore]:
        asked = _words(query_bundle.query_str if query_bundle else "")
        for n in nodes:
            n.score = len(asked & _words(n.node.get_content())) / max(1, len(asked))
        return sorted(nodes, key=lambda n: -(n.score or 0.0))[:self.top_n]


def main(path: str | None = None, question: str = QUESTION) -> dict[str, Any]:
    """Build the store, ask a query engine over the reranked retriever, print and return the sources."""
    with tempfile.TemporaryDirectory(prefix="fused-memory-example-") as tmp, MemoryStore.embedded(path or tmp) as store:
        store.add(demo_memories())
        retriever = EnsembleMemoryRetriever(store, namespace=DEMO_NAMESPACE, now=DEMO_NOW, k=3,
                                            reranker=WordOverlapRerank())
        response = RetrieverQueryEngine.from_args(retriever, llm=MockLLM()).query(question)
    print(str(response))
    print("\nsources:")
    for n in response.source_nodes:
        print(f"  {n.node.metadata['rank']}. {n.node.text}\n     {n.node.metadata['explain']}")
    return {"response": str(response), "source_nodes": response.source_nodes}


if __name__ == "__main__":
    main()
