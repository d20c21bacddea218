"""A memory written through any of the three ways in (the LangGraph store, the write tools of either
framework, the LlamaIndex memory block) is found at once by all the others, over one `MemoryStore`
in one process, and a delete through one is seen by the others. LangMem's own search tool over
`FusedMemoryStore` is one of the readers. Namespace "memories.u1" is LangGraph's ("memories", "u1")."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langmem import create_search_memory_tool
from llama_index.core.base.llms.types import ChatMessage, MessageRole

from fused_memory import MemoryStore
from langchain_fused_memory import EnsembleMemoryRetriever as LCRetriever
from langchain_fused_memory import FusedMemoryStore
from langchain_fused_memory import memory_delete_tool as lc_delete
from langchain_fused_memory import memory_tool as lc_search
from langchain_fused_memory import memory_write_tool as lc_write
from llama_index.retrievers.fused_memory import EnsembleMemoryRetriever as LIRetriever
from llama_index.retrievers.fused_memory import FusedMemoryBlock
from llama_index.retrievers.fused_memory import memory_tool as li_search
from llama_index.retrievers.fused_memory import memory_write_tool as li_write

NS = ("memories", "u1")


class Paths:
    """Every reader and writer over one store."""

    def __init__(self, store: MemoryStore) -> None:
        self.lg = FusedMemoryStore(store)
        self.lc = LCRetriever(store=store, namespace="memories.u1")
        self.li = LIRetriever(store, namespace="memories.u1")
        self.block = FusedMemoryBlock(store=store, namespace="memories.u1")
        self.langmem = create_search_memory_tool(namespace=NS, store=self.lg)

    def write(self, path: str, text: str) -> None:
        if path == "store":
            self.lg.put(NS, text.split()[0], {"content": text})
        elif path == "langchain tool":
            assert _call(lc_write(self.lc), {"text": text}).status == "success"
        elif path == "llamaindex tool":
            assert not li_write(self.li).call(text=text).is_error
        else:
            asyncio.run(self.block.aput([ChatMessage(role=MessageRole.USER, content=text)], session_id="s1"))

    def readers(self, query: str) -> dict[str, str]:
        """What each reader returns for `query`, as text."""
        return {
            "store": " ".join(str(i.value) for i in self.lg.search(NS, query=query)),
            "langmem": str(self.langmem.invoke({"query": query})),
            "langchain tool": str(_call(lc_search(self.lc), {"query": query}).content),
            "llamaindex tool": li_search(self.li).call(input=query).content,
            "memory block": asyncio.run(self.block.aget([ChatMessage(role=MessageRole.USER, content=query)])),
        }


def _call(tool: Any, args: dict[str, Any]) -> ToolMessage:
    return tool.invoke({"type": "tool_call", "id": "c", "name": tool.name, "args": args})


WRITES = {"store": "kumquat jam is my favourite breakfast", "langchain tool": "quokka sightings happen near Perth",
          "llamaindex tool": "zeppelin rides over Friedrichshafen are booked",
          "memory block": "xylophone lessons on Fridays"}


@pytest.mark.parametrize("writer", sorted(WRITES))
def test_a_write_through_one_path_is_found_by_every_other(store_factory: Any, writer: str) -> None:
    paths = Paths(store_factory())
    text = WRITES[writer]
    paths.write(writer, text)
    found = paths.readers(text.split()[0])
    assert {reader: text in answer for reader, answer in found.items()} == dict.fromkeys(found, True)


def test_a_delete_through_one_path_is_seen_by_the_others(store_factory: Any) -> None:
    paths = Paths(store_factory())
    for writer, text in WRITES.items():
        paths.write(writer, text)
    assert len(paths.lg.search(NS, limit=10)) == 4
    paths.lg.delete(NS, "kumquat")
    tool_written = next(i for i in paths.lg.search(NS) if i.value["content"] == WRITES["langchain tool"])
    assert _call(lc_delete(paths.lc), {"memory_id": tool_written.key}).status == "success"
    for query in ("kumquat", "quokka"):
        answers = paths.readers(query).values()
        assert not any(WRITES[w] in answer for w in ("store", "langchain tool") for answer in answers)
    left = json.loads(paths.langmem.invoke({"query": "anything"}))
    assert sorted(d["value"]["content"] for d in left) == sorted([WRITES["llamaindex tool"], WRITES["memory block"]])
