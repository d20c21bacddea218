"""An argument or field the code does not know is refused, naming it and what is accepted, and
nothing is written: a model that guessed `event_at` for `time` must hear so and retry, not read
"Saved to memory" while the date was dropped; one that wrote `namepsace` must not be answered from
the default namespace as if it had been heard. One check (`agent_writes.refuse_unknown`) serves the
CLI's JSONL lines and every tool, search and write, of both frameworks and the MCP server, in the same
words. Hashing embedder: this is about the tools' arguments."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from fused_memory import EnsembleMemory, InvalidMemory
from fused_memory.agent_writes import refuse_unknown
from fused_memory.cli import main
from fused_memory.mcp_server import Grant, MemoryTools
from langchain_fused_memory import EnsembleMemoryRetriever as LCRetriever
from langchain_fused_memory import memory_delete_tool as lc_delete
from langchain_fused_memory import memory_tool as lc_search
from langchain_fused_memory import memory_write_tool as lc_write
from llama_index.retrievers.fused_memory import EnsembleMemoryRetriever as LIRetriever
from llama_index.retrievers.fused_memory import memory_delete_tool as li_delete
from llama_index.retrievers.fused_memory import memory_tool as li_search
from llama_index.retrievers.fused_memory import memory_write_tool as li_write

GUESSED = {"text": "I moved to Porto", "event_at": "2026-06-01T00:00:00+02:00"}
ANSWER = "unknown argument 'event_at': save_memory takes text, type, time"


def _call(tool: Any, args: dict[str, Any]) -> Any:
    return tool.invoke({"type": "tool_call", "id": "c1", "name": tool.name, "args": args})


def test_the_shared_check_names_the_unknown_and_the_accepted() -> None:
    refuse_unknown({"text": 1}, ("text", "type"), "save_memory")
    with pytest.raises(InvalidMemory, match=r"^unknown fields 'typ', 'when': a line takes text, type$"):
        refuse_unknown({"text": 1, "typ": 2, "when": 3}, ("text", "type"), "a line", kind="field")


def test_langchain_write_tool_answers_an_unknown_argument_and_writes_nothing(store_factory: Any) -> None:
    store = store_factory()
    tool = lc_write(LCRetriever(store=store, namespace="alice"))
    for answer in (_call(tool, GUESSED),
                   asyncio.run(tool.ainvoke({"type": "tool_call", "id": "c1", "name": tool.name, "args": GUESSED}))):
        assert answer.status == "error" and answer.content.startswith(ANSWER), answer.content
    assert store.count("alice") == 0
    gone = _call(lc_delete(LCRetriever(store=store, namespace="alice")), {"memory_id": "x", "why": "asked"})
    assert gone.status == "error" and "unknown argument 'why': forget_memory takes memory_id" in gone.content


def test_llamaindex_write_tool_answers_the_same(store_factory: Any) -> None:
    store = store_factory()
    tool = li_write(LIRetriever(store, namespace="alice"))
    for answer in (tool.call(**GUESSED), asyncio.run(tool.acall(**GUESSED))):
        assert answer.is_error and answer.content.startswith(ANSWER), answer.content
    assert store.count("alice") == 0
    gone = li_delete(LIRetriever(store, namespace="alice")).call(memory_id="x", why="asked")
    assert gone.is_error and "unknown argument 'why': forget_memory takes memory_id" in gone.content


def test_ingest_refuses_a_misspelled_field_with_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    f = tmp_path / "notes.jsonl"
    f.write_text(json.dumps({"text": "ok", "type": "fact"}) + "\n" + json.dumps({"text": "hi", "typ": "fact"}) + "\n")
    assert main(["ingest", str(f), "--path", str(tmp_path / "store")]) == 2
    err = capsys.readouterr().err
    assert "notes.jsonl:2: unknown field 'typ': a line takes text, id, namespace, conversation_id, type" in err
    assert not (tmp_path / "store").exists()


# ---------------------------------------------------------------- the search tools
TYPO = {"query": "badge ID", "namepsace": "bob"}
SEARCH_ANSWER = "unknown argument 'namepsace': search_memory takes "


def test_langchain_search_tool_answers_an_unknown_argument(store_factory: Any) -> None:
    """It searched with the typo dropped, and the model never heard that `namepsace` meant nothing."""
    tool = lc_search(LCRetriever(store=store_factory(), namespace="alice"))
    for answer in (_call(tool, TYPO),
                   asyncio.run(tool.ainvoke({"type": "tool_call", "id": "c1", "name": tool.name, "args": TYPO}))):
        assert answer.status == "error" and answer.content.startswith(SEARCH_ANSWER + "query"), answer.content
        assert answer.artifact is None


def test_llamaindex_search_tool_answers_the_same(store_factory: Any) -> None:
    tool = li_search(LIRetriever(store_factory(), namespace="alice"))
    for answer in (tool.call(**TYPO), asyncio.run(tool.acall(**TYPO))):
        assert answer.is_error and answer.content.startswith(SEARCH_ANSWER + "input"), answer.content
        assert answer.raw_output is None
    extra = tool.call(input="badge ID", k=3)  # it searched and dropped k
    assert extra.is_error and extra.content.startswith("unknown argument 'k': search_memory takes input")
    both = tool.call(input="badge ID", query="badge")
    assert both.is_error and "give the question once" in both.content


async def test_the_mcp_search_tool_answers_in_the_same_words(store_factory: Any) -> None:
    store = store_factory()
    tools = MemoryTools(store, EnsembleMemory(store))
    answer = await tools.call("search_memory", TYPO, Grant(("alice",), True, "test"))
    assert answer.error and answer.text == ("search_memory: " + SEARCH_ANSWER
                                            + "query, k, types, after, before, namespace")
    saved = await tools.call("save_memory", {"text": "hi", "when": "now"}, Grant(("alice",), True, "test"))
    assert saved.error and "unknown argument 'when': save_memory takes text, type, time, namespace" in saved.text
    assert store.count("alice") == 0
