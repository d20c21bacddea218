"""The examples run as written (each builds its own embedded store with the real embedder)
and their outputs show the point of each: the memories reached the prompt, the agent's tool call
returned the memory."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from langchain_core.documents import Document
from langchain_core.messages import ToolMessage
from llama_index.core.schema import NodeWithScore

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_langchain_chain_puts_memories_in_the_prompt(capsys: pytest.CaptureFixture[str]) -> None:
    result = _load("langchain_chain").main()
    docs = result["docs"]
    assert len(docs) == 3 and all(isinstance(d, Document) for d in docs)
    assert any("Berlin office" in d.page_content and "Sarah" in d.page_content for d in docs)
    for d in docs:  # the parrot model answers with its prompt: every memory reached it
        assert d.page_content in result["answer"]
    assert "Question: what did I tell Sarah" in result["answer"]
    assert "why these memories" in capsys.readouterr().out


def test_langchain_agent_tool_artifact_holds_the_memory() -> None:
    result = _load("langchain_agent").main()
    [tool_message] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert tool_message.artifact is result["artifact"]
    assert all(isinstance(d, Document) for d in result["artifact"])
    assert result["artifact"][0].id == "demo-00" and "E-47821" in result["artifact"][0].page_content
    assert "E-47821" in result["answer"]


def test_llamaindex_query_engine_puts_memories_in_the_prompt() -> None:
    result = _load("llamaindex_query_engine").main()
    nodes = result["source_nodes"]
    assert len(nodes) == 3 and all(isinstance(n, NodeWithScore) for n in nodes)
    assert any("meeting notes" in n.node.text for n in nodes)
    for n in nodes:  # MockLLM answers with its prompt: every memory reached it
        assert n.node.text in result["response"]


def test_llamaindex_agent_tool_returned_the_memory() -> None:
    result = _load("llamaindex_agent").main()
    nodes = result["nodes"]
    assert nodes and all(isinstance(n, NodeWithScore) for n in nodes)
    assert any("My manager is Sarah Chen" in n.node.text for n in nodes)
    assert "My manager is Sarah Chen" in result["answer"], "the agent answered from the tool's output"


def test_langchain_rerank_example_reorders_and_survives_a_broken_reranker() -> None:
    result = _load("langchain_rerank").main()
    reranked, unranked = result["reranked"], result["unranked"]
    assert "45 seconds in production" in reranked[0].page_content
    assert reranked[0].metadata["rank_before_rerank"] == 2
    assert "rerank 1.000: #2 -> #1" in reranked[0].metadata["explain"]
    assert reranked[0].metadata["reranked_by"] == "langchain:WordOverlapReranker"
    assert [d.id for d in unranked][:2] == [reranked[1].id, reranked[0].id]  # the fused order
    assert "rerank" in unranked[0].metadata["failed_arms"] and unranked[0].metadata["rerank_score"] is None


def test_llamaindex_rerank_example_puts_the_reranked_nodes_in_the_prompt() -> None:
    result = _load("llamaindex_rerank").main()
    nodes = result["source_nodes"]
    assert "45 seconds in production" in nodes[0].node.text and nodes[0].node.metadata["rank_before_rerank"] == 2
    assert nodes[0].node.metadata["reranked_by"] == "llamaindex:WordOverlapRerank"
    for n in nodes:
        assert n.node.text in result["response"] and "rerank" in n.node.metadata["explain"]
