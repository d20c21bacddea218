"""`memory_write_tool` and `memory_delete_tool` in both frameworks: what the model reads back, the
session context of a save, and every bad argument answered as the tool's result (an error
`ToolMessage` / a `ToolOutput` with `is_error`) with the argument named and nothing written, sync
and async alike. Hashing embedder: these are about the write path, not ranking."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from fused_memory import ConfigurationError, EnsembleMemory, MemoryStore, MemoryType
from fused_memory.agent_writes import parse_time, write_arguments
from langchain_fused_memory import EnsembleMemoryRetriever as LCRetriever
from langchain_fused_memory import memory_delete_tool as lc_delete
from langchain_fused_memory import memory_tool as lc_search
from langchain_fused_memory import memory_write_tool as lc_write
from llama_index.retrievers.fused_memory import EnsembleMemoryRetriever as LIRetriever
from llama_index.retrievers.fused_memory import memory_delete_tool as li_delete
from llama_index.retrievers.fused_memory import memory_tool as li_search
from llama_index.retrievers.fused_memory import memory_write_tool as li_write

#: (arguments, the argument the answer must name); each is the model's mistake.
BAD_WRITES = [
    ({"text": ""}, "text"), ({"text": "   "}, "text"), ({"text": "x", "type": "opinion"}, "type"),
    ({"text": "x", "time": "2024-03-01T09:00:00"}, "time"), ({"text": "x", "time": "2024-03-01"}, "time"),
    ({"text": "x", "time": "next tuesday"}, "time"), ({"text": "bad \ud800 text"}, "text"),
    ({"text": "nul \x00"}, "text"), ({"text": "x" * 100_001}, "text"),
    ({"text": "x", "time": "0001-01-01T00:00:00+01:00"}, "time"),  # outside what a store can hold
]


def _call(tool: Any, args: dict[str, Any], config: dict[str, Any] | None = None) -> ToolMessage:
    return tool.invoke({"type": "tool_call", "id": "c1", "name": tool.name, "args": args}, config=config)


async def _acall(tool: Any, args: dict[str, Any]) -> ToolMessage:
    return await tool.ainvoke({"type": "tool_call", "id": "c1", "name": tool.name, "args": args})


# ---------------------------------------------------------------- shared checks
def test_the_arguments_are_checked_once_for_both_frameworks() -> None:
    args = write_arguments("  I moved to Munich ", "Event", "2024-03-01T09:00:00Z")
    assert args.text == "I moved to Munich" and args.type is MemoryType.EVENT
    assert parse_time("2024-03-01T09:00:00z") == parse_time("2024-03-01T10:00:00+01:00")
    assert write_arguments("x", "", "").type is None and write_arguments("x", None, None).event_at is None


# ---------------------------------------------------------------- LangChain
def test_langchain_save_search_and_delete(store_factory: Any) -> None:
    store = store_factory()
    retriever = LCRetriever(store=store, namespace="alice")
    saved = _call(lc_write(retriever), {"text": "I moved to Munich", "type": "event",
                                        "time": "2024-03-01T09:00:00+01:00"}, {"configurable": {"thread_id": "t1"}})
    assert saved.status == "success"
    line = f"[event, 2024-03-01T09:00:00+01:00, id={saved.artifact['id']}] I moved to Munich"
    assert saved.content == f"Saved to memory: {line}"
    assert saved.artifact["session_id"] == "t1" and saved.artifact["namespace"] == "alice"
    found = _call(lc_search(retriever, show_ids=True), {"query": "Munich"})
    assert f"id={saved.artifact['id']}" in found.content and "I moved to Munich" in found.content
    gone = _call(lc_delete(retriever), {"memory_id": saved.artifact["id"]})
    assert gone.status == "success" and gone.content.startswith("Deleted from memory: [event")
    assert store.count("alice") == 0
    again = _call(lc_delete(retriever), {"memory_id": saved.artifact["id"]})
    assert again.status == "error" and "memory_id" in again.content


@pytest.mark.parametrize(("args", "named"), BAD_WRITES)
def test_langchain_bad_arguments_are_the_answer(store_factory: Any, args: dict[str, Any], named: str) -> None:
    store = store_factory()
    tool = lc_write(LCRetriever(store=store, namespace="alice"))
    for answer in (_call(tool, args), asyncio.run(_acall(tool, args))):
        assert isinstance(answer, ToolMessage) and answer.status == "error" and answer.content.startswith(f"{named} ")
    assert store.count("alice") == 0


@pytest.mark.parametrize(("args", "named"), [({}, "text: Field required"), ({"text": 5}, "text: Input should be"),
                                             ({"text": "x", "type": ["fact"]}, "type: Input should be"),
                                             ({"txt": "x"}, "unknown argument 'txt': save_memory takes text, type, "
                                                            "time; text: Field required")])
def test_langchain_arguments_off_the_schema_are_the_answer(store_factory: Any, args: dict[str, Any],
                                                           named: str) -> None:
    store = store_factory()
    answer = _call(lc_write(LCRetriever(store=store, namespace="alice")), args)
    assert answer.status == "error" and answer.content.startswith(named) and store.count("alice") == 0
    answer = _call(lc_delete(LCRetriever(store=store, namespace="alice")), {"id": "x"})
    assert answer.status == "error" and "memory_id" in answer.content


def test_a_save_in_a_session_is_indexed_with_the_turns_before_it(store_factory: Any) -> None:
    store: MemoryStore = store_factory()
    tool = lc_write(LCRetriever(store=store, namespace="alice"), session_id="s1")
    texts = ["We adopted a puppy", "It is a beagle", "His name is Rex"]
    for text in texts:
        _call(tool, {"text": text})
    asyncio.run(_acall(lc_write(LCRetriever(store=store, namespace="alice")), {"text": "No session here"}))
    by_text = {m.text: m for m in store.memories("alice")}
    assert by_text["We adopted a puppy"].context is None
    assert by_text["It is a beagle"].context == "We adopted a puppy"
    assert by_text["His name is Rex"].context == "We adopted a puppy\nIt is a beagle"  # two turns, oldest first
    assert by_text["No session here"].context is None and by_text["No session here"].session_id is None


def test_the_tools_refuse_a_retriever_they_cannot_write_through(store_factory: Any) -> None:
    store = store_factory()
    with pytest.raises(ConfigurationError, match="LangChain retriever"):
        lc_write(LIRetriever(store, namespace="alice"))  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="LlamaIndex retriever"):
        li_delete(LCRetriever(store=store, namespace="alice"))  # type: ignore[arg-type]


class ReadThrough:
    """What an ensemble may read (an `EnsembleSource`) without being a `MemoryStore`: a view that
    forwards every read to the real store and has no write of its own."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        if name in ("add", "delete"):
            raise AttributeError(name)
        return getattr(self._store, name)


def test_the_tools_refuse_when_built_an_ensemble_that_reads_no_memory_store(store_factory: Any) -> None:
    """They built, and the model's first save failed with an AttributeError."""
    ensemble = EnsembleMemory(ReadThrough(store_factory()))  # type: ignore[arg-type]
    for build in (lambda: lc_write(LCRetriever(ensemble=ensemble, namespace="alice")),
                  lambda: lc_delete(LCRetriever(ensemble=ensemble, namespace="alice")),
                  lambda: li_write(LIRetriever(ensemble=ensemble, namespace="alice")),
                  lambda: li_delete(LIRetriever(ensemble=ensemble, namespace="alice"))):
        with pytest.raises(ConfigurationError, match="writes memories, so it needs a fused_memory MemoryStore"):
            build()


# ---------------------------------------------------------------- LlamaIndex
def test_llamaindex_save_search_and_delete(store_factory: Any) -> None:
    store = store_factory()
    retriever = LIRetriever(store, namespace="alice")
    saved = li_write(retriever, session_id="s1").call(text="I prefer aisle seats", type="preference")
    assert not saved.is_error and saved.raw_output["session_id"] == "s1"
    assert saved.content == f"Saved to memory: [preference, id={saved.raw_output['id']}] I prefer aisle seats"
    found = li_search(retriever, show_ids=True).call(input="aisle seats")
    assert f"[preference, id={saved.raw_output['id']}] I prefer aisle seats" in found.content
    gone = asyncio.run(li_delete(retriever).acall(memory_id=saved.raw_output["id"]))
    assert not gone.is_error and store.count("alice") == 0
    assert li_delete(retriever).call(saved.raw_output["id"]).is_error  # positional, and no longer there


@pytest.mark.parametrize(("args", "named"), [*BAD_WRITES, ({"txt": "x"}, "unknown"), ({}, "text")])
def test_llamaindex_bad_arguments_are_the_answer(store_factory: Any, args: dict[str, Any], named: str) -> None:
    store = store_factory()
    tool = li_write(LIRetriever(store, namespace="alice"))
    for answer in (tool.call(**args), asyncio.run(tool.acall(**args))):
        assert answer.is_error and answer.content.startswith(f"{named} ") and answer.tool_name == "save_memory"
    assert store.count("alice") == 0


def test_both_frameworks_tell_the_model_the_same(store_factory: Any) -> None:
    store = store_factory()
    args = {"text": "My badge ID is E-47821", "type": "fact", "time": "2024-01-02T03:04:05+00:00"}
    lc = _call(lc_write(LCRetriever(store=store, namespace="a")), args)
    li = li_write(LIRetriever(store, namespace="b")).call(**args)
    assert lc.content.replace(lc.artifact["id"], "ID") == li.content.replace(li.raw_output["id"], "ID")
    assert li.tool_name == "save_memory" and lc.name == "save_memory"
    assert li_write(LIRetriever(store, namespace="b")).metadata.get_parameters_dict()["required"] == ["text"]
