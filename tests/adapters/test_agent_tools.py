"""What an agent's tools and retrievers say in the cases an agent developer cares about, in both
frameworks alike:

* no hit while part of the search failed is not "no memories": the retriever raises
  `BackendUnavailable` (it returned [], and the tool told the model "No memories matched");
* the LlamaIndex tool shows the model what the LangChain tool does, `[type, event time] text` or
  `NO_MEMORIES`, not empty content nor each memory's two preceding chat turns;
* each `memory_tool` refuses the other framework's retriever of the same name when built, not on
  the model's first call.
"""

from __future__ import annotations

from typing import Any

import pytest

from fused_memory.adapters import NO_MEMORIES
from fused_memory.conversation import conversation_context
from fused_memory.ensemble import EnsembleMemory
from fused_memory.errors import BackendUnavailable, ConfigurationError
from fused_memory.results import Hit
from fused_memory.store.memory_store import MemoryStore
from fused_memory.types import Memory
from langchain_fused_memory import EnsembleMemoryRetriever as LCEnsemble
from langchain_fused_memory import memory_tool as lc_tool
from llama_index.retrievers.fused_memory import EnsembleMemoryRetriever as LIEnsemble
from llama_index.retrievers.fused_memory import memory_tool as li_tool

from ._seed import NOW, NS

UNMATCHED = "xyzzy plugh"  # no word of it in any memory


class Down:
    def search(self, request: Any) -> list[Hit]:
        raise RuntimeError("qdrant went away")


def test_no_hit_while_an_arm_failed_raises_in_both_adapters(seeded_store: MemoryStore) -> None:
    ens = EnsembleMemory(seeded_store, arms={a: Down() for a in ("dense", "type", "temporal", "graph")})
    try:
        assert not ens.retrieve(UNMATCHED, namespace=NS, now=NOW).hits  # the core still reports, not raises
        with pytest.raises(BackendUnavailable, match="search was incomplete") as raised:
            LCEnsemble(ensemble=ens, namespace=NS, now=NOW).invoke(UNMATCHED)
        assert "dense" in raised.value.causes
        with pytest.raises(BackendUnavailable, match="search was incomplete"):
            LIEnsemble(ensemble=ens, namespace=NS, now=NOW).retrieve(UNMATCHED)
        with pytest.raises(BackendUnavailable):  # the program must know; the model cannot fix it
            lc_tool(LCEnsemble(ensemble=ens, namespace=NS, now=NOW)).invoke({"query": UNMATCHED})
        assert LCEnsemble(ensemble=ens, namespace=NS, now=NOW).invoke("badge ID")  # with hits: answered
    finally:
        ens.close()


def test_both_tools_show_the_model_the_same_memories(seeded_store: MemoryStore) -> None:
    lc = lc_tool(LCEnsemble(store=seeded_store, namespace=NS, now=NOW)).invoke({"query": "what did I do yesterday?"})
    li = li_tool(LIEnsemble(seeded_store, namespace=NS, now=NOW)).call(input="what did I do yesterday?")
    assert li.content == lc and lc.startswith("[event, ")
    empty = li_tool(LIEnsemble(seeded_store, namespace="nobody-here", now=NOW)).call(input="badge")
    assert empty.content == NO_MEMORIES and empty.raw_output == []


def test_the_llamaindex_tool_does_not_show_a_memorys_chat_context(tmp_path: Any) -> None:
    from fused_memory.embeddings import HashingEmbedder

    store = MemoryStore.embedded(tmp_path / "s", embedder=HashingEmbedder(dim=64), ner=False)
    with store:
        store.add(conversation_context([
            Memory(text="Did you ever get the bike fixed?", namespace="c", session_id="s1"),
            Memory(text="Yes, new brakes.\n\n\nIt rides great now.", namespace="c", session_id="s1")]))
        out = li_tool(LIEnsemble(store, namespace="c", now=NOW)).call(input="new brakes")
        [brakes] = [p for p in out.content.split("\n\n") if "new brakes" in p]
        assert brakes.endswith("] Yes, new brakes.\nIt rides great now.")  # no context; blank lines closed up
        node = out.raw_output[0].node
        assert "context" in node.metadata and "Did you ever" not in node.get_content(metadata_mode="llm")


def test_each_tool_refuses_the_other_frameworks_retriever(seeded_store: MemoryStore) -> None:
    with pytest.raises(ConfigurationError, match="langchain_fused_memory"):
        li_tool(LCEnsemble(store=seeded_store, namespace=NS))  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="llama_index.retrievers.fused_memory"):
        lc_tool(LIEnsemble(seeded_store, namespace=NS))  # type: ignore[arg-type]


def test_a_failure_outside_the_plan_does_not_make_an_empty_answer_raise() -> None:
    """The planner's entity lookup reports a down graph as a graph failure whatever arms run; a
    BM25 retriever's empty answer on a new user's namespace then raised."""
    from fused_memory.adapters import answered
    from fused_memory.results import ArmFailure, ParsedQuery, QueryPlan, Retrieval

    parsed = ParsedQuery(text="q", now=NOW)
    lookup_only = Retrieval((), QueryPlan(arms=("lexical",)), parsed, (ArmFailure("graph", "entity lookup failed"),))
    assert answered(lookup_only) is lookup_only
    planned = Retrieval((), QueryPlan(arms=("lexical", "graph")), parsed, (ArmFailure("graph", "down"),))
    with pytest.raises(BackendUnavailable):
        answered(planned)


def test_the_langchain_tool_takes_a_configurable_retriever(seeded_store: MemoryStore) -> None:
    """README: make `namespace` configurable behind the tool; the type check of the tool refused it."""
    from langchain_core.runnables import ConfigurableField

    per_user = LCEnsemble(store=seeded_store, namespace="nobody", now=NOW).configurable_fields(
        namespace=ConfigurableField(id="namespace"))
    tool = lc_tool(per_user)
    assert tool.invoke({"query": "badge ID"}, config={"configurable": {"namespace": NS}}) != NO_MEMORIES
