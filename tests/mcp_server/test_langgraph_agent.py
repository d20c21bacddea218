"""`examples/mcp_agent.py` runs as written: `langchain-mcp-adapters` loads the server's tools (over
stdio, the server a subprocess) into a LangGraph agent whose chat model is scripted (a stand-in for
a tool-calling LLM that supports `bind_tools`); what one thread saves, the next finds, and a
misspelled argument reaches the model as an error ToolMessage instead of ending the run."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import ToolMessage

from tests.conftest import load_example

pytestmark = pytest.mark.slow


def test_a_langgraph_agent_saves_and_finds_memories_through_the_mcp_tools(tmp_path: Path) -> None:
    result = load_example("mcp_agent").main(str(tmp_path / "store"))
    assert result["tools"] == ["delete_memory", "list_memories", "save_memory", "search_memory"]
    saves = [m for m in result["thread_1"] if isinstance(m, ToolMessage)]
    assert [m.status for m in saves] == ["success", "success"]
    assert all(m.text.startswith("Saved to memory: [") for m in saves)
    [search] = [m for m in result["thread_2"] if isinstance(m, ToolMessage)]
    assert search.status == "success" and search.text.splitlines()[0].endswith("I moved to Munich in March.")
    assert "(why: dense#1" in search.text
    assert result["answer"].endswith("I moved to Munich in March.")
    [typo] = [m for m in result["thread_3"] if isinstance(m, ToolMessage)]
    assert typo.status == "error" and "unknown argument 'qeury'" in typo.text
    assert result["thread_3"][-1].text.startswith("(search_memory, error)")  # the model got the error and went on
