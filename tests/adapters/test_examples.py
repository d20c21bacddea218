"""The examples run as written (each builds its own embedded store with the real embedder) and
their outputs show the point of each: the memories reached the prompt, the agent's tool call
returned the memory, a memory saved in one conversation was found in the next (LangGraph with
LangMem's tools, LangGraph with ours, LlamaIndex with the memory block)."""

from __future__ import annotations

import pytest
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, ToolMessage
from llama_index.core.schema import NodeWithScore

from tests.conftest import load_example

pytestmark = pytest.mark.slow  # every example end to end, on the real model


def test_langchain_chain_puts_memories_in_the_prompt(capsys: pytest.CaptureFixture[str]) -> None:
    result = load_example("langchain_chain").main()
    docs = result["docs"]
    assert len(docs) == 3 and all(isinstance(d, Document) for d in docs)
    assert any("Berlin office" in d.page_content and "Sarah" in d.page_content for d in docs)
    for d in docs:  # the parrot model answers with its prompt: every memory reached it
        assert d.page_content in result["answer"]
    assert "Question: what did I tell Sarah" in result["answer"]
    assert "why these memories" in capsys.readouterr().out


def test_langchain_agent_tool_artifact_holds_the_memory() -> None:
    result = load_example("langchain_agent").main()
    [tool_message] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert tool_message.artifact is result["artifact"]
    assert all(isinstance(d, Document) for d in result["artifact"])
    assert result["artifact"][0].id == "demo-00" and "E-47821" in result["artifact"][0].page_content
    assert "E-47821" in result["answer"]


def test_llamaindex_query_engine_puts_memories_in_the_prompt() -> None:
    result = load_example("llamaindex_query_engine").main()
    nodes = result["source_nodes"]
    assert len(nodes) == 3 and all(isinstance(n, NodeWithScore) for n in nodes)
    assert any("meeting notes" in n.node.text for n in nodes)
    for n in nodes:  # MockLLM answers with its prompt: every memory reached it
        assert n.node.text in result["response"]


def test_llamaindex_agent_tool_returned_the_memory() -> None:
    result = load_example("llamaindex_agent").main()
    nodes = result["nodes"]
    assert nodes and all(isinstance(n, NodeWithScore) for n in nodes)
    assert any("My manager is Sarah Chen" in n.node.text for n in nodes)
    assert "My manager is Sarah Chen" in result["answer"], "the agent answered from the tool's output"


def _tool_messages(messages: list[object]) -> list[ToolMessage]:
    return [m for m in messages if isinstance(m, ToolMessage)]


def test_langgraph_langmem_agent_finds_in_thread_2_what_thread_1_saved() -> None:
    result = load_example("langgraph_langmem_agent").main()
    saves = _tool_messages(result["thread_1"])
    assert [m.name for m in saves] == ["manage_memory", "manage_memory"]
    assert all(m.content.startswith("created memory") for m in saves)
    assert len(result["thread_2"]) == 4  # question, search call, result, answer: thread 2 began with no messages
    [search] = _tool_messages(result["thread_2"])
    assert search.name == "search_memory" and '"score":' in search.content
    assert result["answer"] == "From your memory: I take my coffee as a dark roast, no sugar."
    coffee, dog = result["items"]  # fused scores, best first
    assert coffee.value == {"content": "I take my coffee as a dark roast, no sugar."} and coffee.score > dog.score


def test_langgraph_tools_agent_finds_in_thread_2_what_thread_1_saved() -> None:
    result = load_example("langgraph_tools_agent").main()
    saves = _tool_messages(result["thread_1"])
    assert [m.name for m in saves] == ["save_memory", "save_memory"] and all(m.status == "success" for m in saves)
    assert saves[0].content.startswith("Saved to memory: [event, 2024-03-01T09:00:00+01:00, id=")
    assert result["answer"] == "From your memory: [event, 2024-03-01T09:00:00+01:00] I moved to Munich in March."
    by_text = {m.text: m for m in result["stored"]}
    window = by_text["I prefer window seats on trains."]
    assert window.session_id == "1" and window.context == "I moved to Munich in March."  # thread 1 is its session
    assert {i.value["content"] for i in result["items"]} == set(by_text)  # the LangGraph store holds them too
    assert isinstance(result["thread_2"][-1], AIMessage)


def test_llamaindex_memory_block_carries_a_fact_to_the_next_conversation() -> None:
    result = load_example("llamaindex_memory_block").main()
    assert result["answer"] == "From memory: [fact] My manager there is Priya Nair, she is great so far."
    assert {(m.session_id, m.metadata["role"]) for m in result["stored"]} == {("monday", "user")}  # not the replies
    assert result["shown"].startswith("<memory>\n<fused_memory>\n[fact] My manager there is Priya Nair")


def test_langchain_rerank_example_reorders_and_survives_a_broken_reranker() -> None:
    result = load_example("langchain_rerank").main()
    reranked, unranked = result["reranked"], result["unranked"]
    assert "45 seconds in production" in reranked[0].page_content
    assert reranked[0].metadata["rank_before_rerank"] == 2
    assert "rerank 1.000: #2 -> #1" in reranked[0].metadata["explain"]
    assert reranked[0].metadata["reranked_by"] == "langchain:WordOverlapReranker"
    assert [d.id for d in unranked][:2] == [reranked[1].id, reranked[0].id]  # the fused order
    assert "rerank" in unranked[0].metadata["failed_arms"] and unranked[0].metadata["rerank_score"] is None


def test_llamaindex_rerank_example_puts_the_reranked_nodes_in_the_prompt() -> None:
    result = load_example("llamaindex_rerank").main()
    nodes = result["source_nodes"]
    assert "45 seconds in production" in nodes[0].node.text and nodes[0].node.metadata["rank_before_rerank"] == 2
    assert nodes[0].node.metadata["reranked_by"] == "llamaindex:WordOverlapRerank"
    for n in nodes:
        assert n.node.text in result["response"] and "rerank" in n.node.metadata["explain"]
