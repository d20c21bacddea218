"""A LlamaIndex `RetrieverQueryEngine` over fused memory.

Runs offline: an embedded store in a temporary directory, the bundled MiniLM embedder, and
LlamaIndex's `MockLLM`, which answers with the prompt it was given, so the response shows exactly
which memories reached the model.

    python examples/llamaindex_query_engine.py
"""

from __future__ import annotations

import tempfile
from typing import Any

from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine

from fused_memory import MemoryStore
from fused_memory.demo import DEMO_NAMESPACE, DEMO_NOW, demo_memories
from llama_index.retrievers.fused_memory import EnsembleMemoryRetriever

__all__ = ["main", "QUESTION"]

QUESTION = "how do I like my meeting notes?"


def main(path: str | None = None, question: str = QUESTION) -> dict[str, Any]:
    """Build the store, ask once, print and return the response and its source nodes."""
    with tempfile.TemporaryDirectory(prefix="fused-memory-example-") as tmp, MemoryStore.embedded(path or tmp) as store:
        store.add(demo_memories())
        retriever = EnsembleMemoryRetriever(store, namespace=DEMO_NAMESPACE, now=DEMO_NOW, k=3)
        engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())
        response = engine.query(question)
    print(str(response))
    print("\nsources:")
    for n in response.source_nodes:
        print(f"  {n.node.metadata['rank']}. [{n.score:.4f}] {n.node.text}  <- {n.node.metadata['explain']}")
    return {"response": str(response), "source_nodes": response.source_nodes}


if __name__ == "__main__":
    main()
