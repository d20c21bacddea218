"""Both frameworks answer the same mistake the same way: an empty or over-long question to the
search tool is the model's to correct, so both tools answer it with the core's message (the
LlamaIndex tool raised `QueryError`, which ended the agent's run). Hashing embedder: this is
about the tools' answers, not ranking."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from langchain_fused_memory import EnsembleMemoryRetriever as LCRetriever
from langchain_fused_memory import memory_tool as lc_tool
from llama_index.retrievers.fused_memory import EnsembleMemoryRetriever as LIRetriever
from llama_index.retrievers.fused_memory import memory_tool as li_tool


@pytest.mark.parametrize("question", ["", "   ", "x" * 10_001])
def test_a_refused_question_is_the_answer_in_both_frameworks(store_factory: Any, question: str) -> None:
    store = store_factory()
    lc = lc_tool(LCRetriever(store=store, namespace="u")).invoke(
        {"type": "tool_call", "id": "c1", "name": "search_memory", "args": {"query": question}})
    li = li_tool(LIRetriever(store, namespace="u"))
    for answer in (li.call(query=question), li.call(input=question), asyncio.run(li.acall(input=question))):
        assert answer.is_error and answer.content == lc.content and lc.status == "error", (answer.content, lc.content)


def test_a_call_without_a_question_is_the_answer(store_factory: Any) -> None:
    tool = li_tool(LIRetriever(store_factory(), namespace="u"))
    answer = tool.call(k=3)  # an argument it does not have, and no question: both said
    assert answer.is_error and "unknown argument 'k'" in answer.content and "input: the question" in answer.content
    assert "takes one question as text" in tool.call().content
