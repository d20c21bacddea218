"""`examples/mcp_agent.py` runs as written: `langchain-mcp-adapters` loads the server's tools (over
stdio, the server a subprocess) into a LangGraph agent whose chat model is scripted (a stand-in for
a tool-calling LLM that supports `bind_tools`); what one thread saves, the next finds, and a
misspelled argument reaches the model as an error ToolMessage instead of ending the run."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from langchain_core.messages import ToolMessage

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

pytestmark = pytest.mark.slow


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_langgraph_agent_saves_and_finds_memories_through_the_mcp_tools(tmp_path: Path) -> None:
    result = _load("mcp_agent").main(str(tmp_path / "store"))
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
