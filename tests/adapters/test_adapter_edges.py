"""What a LangChain or LlamaIndex caller can get wrong, and what they get back: a library error
naming the mistake, never a plain Python error from deep inside, and never a search for something
other than the question."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pytest
from pydantic import ValidationError

from fused_memory.ensemble import EnsembleMemory
from fused_memory.errors import ConfigurationError, QueryError
from fused_memory.store.memory_store import MemoryStore
from langchain_fused_memory import EnsembleMemoryRetriever as LCEnsemble
from llama_index.retrievers.fused_memory import EnsembleMemoryRetriever as LIEnsemble
from llama_index.retrievers.fused_memory import memory_tool

from ._seed import NOW, NS, OTHER_NS, QUERY

BADGE = "what's my badge ID?"


@pytest.mark.parametrize("kwargs", [{"now": "garbage"}, {"now": ""}, {"now": 5}, {"types": 5}])
def test_a_bad_now_or_types_per_call_is_a_query_error(seeded_store: MemoryStore, kwargs: dict) -> None:
    with pytest.raises(QueryError):
        LCEnsemble(store=seeded_store, namespace=NS, now=NOW).invoke(BADGE, **kwargs)
    with pytest.raises(QueryError):
        LIEnsemble(seeded_store, namespace=NS, **{"now": NOW, **kwargs}).retrieve(BADGE)


def test_a_numpy_k_is_a_k(seeded_store: MemoryStore) -> None:
    docs = LCEnsemble(store=seeded_store, namespace=NS, now=NOW).invoke(BADGE, k=np.int64(2))
    assert len(docs) == 2
    assert len(LCEnsemble(store=seeded_store, namespace=NS, now=NOW, k=np.int64(2)).invoke(BADGE)) == 2


@pytest.mark.parametrize("kwargs", [{"namesapce": NS}, {"k": "5"}, {"k": 2.0}, {"k": True}])
def test_the_langchain_constructor_refuses_what_it_would_misread(seeded_store: MemoryStore, kwargs: dict) -> None:
    """A misspelled field used to search the "default" namespace; k="5" was converted silently."""
    with pytest.raises(ValidationError):
        LCEnsemble(store=seeded_store, **kwargs)


@pytest.mark.parametrize("kwargs", [{"k": 0}, {"k": -1}, {"types": ["opinion"]}, {"namespace": ""},
                                    {"namespace": "a\x00b"},
                                    {"now": datetime(2024, 1, 1)}, {"now": "2024-01-01T00:00"}])
def test_a_bad_default_fails_at_construction_in_both_adapters(seeded_store: MemoryStore, kwargs: dict) -> None:
    """These constructed fine and failed on the first query, away from the line that wrote them;
    LangChain's k check said "positive" but let 0 through."""
    from langchain_fused_memory import QueryOptimizerChain

    with pytest.raises(ValidationError):
        LCEnsemble(store=seeded_store, **kwargs)
    with pytest.raises(QueryError):
        LIEnsemble(seeded_store, **kwargs)
    if "k" not in kwargs:
        with pytest.raises(ValidationError):
            QueryOptimizerChain(store=seeded_store, **kwargs)
    with pytest.raises(QueryError, match="k must be a positive integer"):
        LIEnsemble(seeded_store, k="3")  # LangChain refused it already; LlamaIndex took it
    with pytest.raises(ValidationError):
        QueryOptimizerChain(store=seeded_store, namesapce=NS)


def test_one_type_is_shorthand_in_every_constructor(seeded_store: MemoryStore) -> None:
    lc = LCEnsemble(store=seeded_store, namespace=NS, now=NOW, types="preference")
    li = LIEnsemble(seeded_store, namespace=NS, now=NOW, types="preference")
    assert lc.types == ["preference"]
    assert [d.id for d in lc.invoke("meeting notes")] == [n.node.id_ for n in li.retrieve("meeting notes")]


def test_a_retriever_takes_its_tenant_from_its_own_fields_not_from_a_shared_config_key(
        seeded_store: MemoryStore) -> None:
    """`config["configurable"]` is shared by every component of a run, so a generic "namespace" key
    set for another component must not switch the tenant searched; `configurable_fields` is the
    way to make it configurable."""
    from langchain_core.runnables import ConfigurableField

    r = LCEnsemble(store=seeded_store, namespace=NS, now=NOW)
    own = [d.id for d in r.invoke(BADGE)]
    assert [d.id for d in r.invoke(BADGE, config={"configurable": {"namespace": OTHER_NS}})] == own
    tenant = r.configurable_fields(namespace=ConfigurableField(id="tenant"))
    assert [d.id for d in tenant.invoke(BADGE, config={"configurable": {"tenant": OTHER_NS}})] == \
        [d.id for d in r.invoke(BADGE, namespace=OTHER_NS)]


@pytest.mark.parametrize("call", [{"input": ""}, {"input": "   "}, {"input": None}, {}, {"query": ""},
                                  {"a": "x", "b": "y"}])
def test_the_llamaindex_tool_refuses_a_missing_or_empty_question(seeded_store: MemoryStore, call: dict) -> None:
    """No search for "input is" (every memory would come back): the checks refuse, and the refusal
    is the tool's answer to the model, as LangChain's tool gives it."""
    tool = memory_tool(LIEnsemble(seeded_store, namespace=NS, now=NOW))
    answer = tool.call(**call)
    assert answer.is_error and answer.raw_output is None and ("query" in answer.content or "question" in answer.content)


async def test_the_llamaindex_tool_searches_exactly_the_question(seeded_store: MemoryStore) -> None:
    retriever = LIEnsemble(seeded_store, namespace=NS, now=NOW)
    tool = memory_tool(retriever)
    expected = [n.node.id_ for n in retriever.retrieve(BADGE)]
    refused = tool.call(input=BADGE, k=3)  # an argument it does not have is refused, not dropped
    assert refused.is_error and refused.content.startswith("unknown argument 'k': search_memory takes input")
    assert [n.node.id_ for n in tool.call(BADGE).raw_output] == expected
    assert [n.node.id_ for n in tool.call(query=BADGE).raw_output] == expected  # an agent's other name for it
    assert [n.node.id_ for n in (await tool.acall(input=BADGE)).raw_output] == expected


def test_a_deep_copied_retriever_works_and_shares_its_store(seeded_store: MemoryStore) -> None:
    """copy.deepcopy and pydantic's model_copy(deep=True) of a retriever do not fail with "cannot
    pickle EdgeShard": a copy shares the store (a handle, as a connection pool would be) and keeps
    its own fields."""
    import copy

    from langchain_fused_memory import memory_tool as lc_memory_tool

    lc = LCEnsemble(store=seeded_store, namespace=NS, now=NOW, k=3)
    li = LIEnsemble(seeded_store, namespace=NS, now=NOW, k=3)
    want = [d.id for d in lc.invoke(BADGE)]
    for twin in (copy.deepcopy(lc), lc.model_copy(deep=True), lc.model_copy(deep=True, update={"k": 1})):
        assert twin.store is seeded_store
        assert [d.id for d in twin.invoke(BADGE)] == want[:twin.k]
    twin_li = copy.deepcopy(li)
    assert twin_li.ensemble.store is seeded_store
    assert [n.node.node_id for n in twin_li.retrieve(BADGE)] == [n.node.node_id for n in li.retrieve(BADGE)]
    tools = copy.deepcopy([lc_memory_tool(lc, "recall", "memories"), memory_tool(li)])  # copied per agent
    call = {"type": "tool_call", "id": "c", "name": "recall", "args": {"query": BADGE}}
    assert [d.id for d in tools[0].invoke(call).artifact] == want
    assert [n.node.id_ for n in tools[1].call(input=BADGE).raw_output] == [n.node.id_ for n in li.retrieve(BADGE)]


def test_a_copy_pointed_at_another_store_never_searches_the_old_one(seeded_store: MemoryStore, tmp_path) -> None:
    """pydantic's model_copy(update=...) skips validation, so a copy given another store kept the
    first store's ensemble and would search it under the new store's name. A default ensemble the
    adapter derived gives way to the new store, as `configurable_fields(store=...)`
    does; a caller's own ensemble over the old store is refused (which was meant cannot be known)."""
    from fused_memory.types import Memory
    from langchain_fused_memory import QueryOptimizerChain

    other = MemoryStore.embedded(tmp_path / "other")
    other.add([Memory("My badge ID is ZZ-0001 at the new site.", namespace=NS)])
    moved_text = ["My badge ID is ZZ-0001 at the new site."]
    try:
        lc = LCEnsemble(store=seeded_store, namespace=NS, now=NOW)
        assert [d.page_content for d in lc.model_copy(update={"store": other}).invoke(BADGE)] == moved_text
        assert lc.invoke(BADGE) and lc.invoke(BADGE)[0].page_content != moved_text[0]  # the original is untouched
        plan = QueryOptimizerChain(store=seeded_store, namespace=NS).model_copy(update={"store": other}).invoke(
            "what did Sarah say?")
        assert "graph" not in plan.arms  # planned against the other store, which knows no Sarah
        li = LIEnsemble(seeded_store, namespace=NS, now=NOW)
        li.store = other  # LlamaIndex retrievers are plain objects: an assignment is the same move
        assert [n.node.text for n in li.retrieve(BADGE)] == moved_text
        own = EnsembleMemory(seeded_store)
        with pytest.raises(ConfigurationError, match="store and ensemble disagree"):
            LCEnsemble(ensemble=own, namespace=NS, now=NOW).model_copy(update={"store": other}).invoke(BADGE)
        li_own = LIEnsemble(ensemble=own, namespace=NS, now=NOW)
        li_own.store = other
        with pytest.raises(ConfigurationError, match="store and ensemble disagree"):
            li_own.retrieve(BADGE)
        both = lc.model_copy(update={"store": other, "ensemble": EnsembleMemory(other)})
        assert [d.page_content for d in both.invoke(BADGE)] == moved_text
        own.close()
    finally:
        other.close()


def test_configurable_store_searches_the_store_configured(seeded_store: MemoryStore, tmp_path) -> None:
    """LangChain's `configurable_fields(store=...)` rebuilds the retriever from its fields with only
    the store replaced, so the default ensemble built for the old store arrived beside the new one
    and construction failed with "disagree". A derived ensemble now gives way to the chosen store; a
    caller's own ensemble still does not (which of the two was meant cannot be known)."""
    import copy

    from langchain_core.runnables import ConfigurableField

    from fused_memory.types import Memory
    from langchain_fused_memory import BM25MemoryRetriever, QueryOptimizerChain

    other = MemoryStore.embedded(tmp_path / "other")
    other.add([Memory("My badge ID is ZZ-0001 at the new site.", namespace=NS)])
    try:
        for base in (LCEnsemble(store=seeded_store, namespace=NS, now=NOW),
                     copy.deepcopy(BM25MemoryRetriever(store=seeded_store, namespace=NS, now=NOW))):
            switchable = base.configurable_fields(store=ConfigurableField(id="memory_store"))
            default_texts = [d.page_content for d in switchable.invoke(BADGE)]
            assert default_texts and "ZZ-0001" not in " ".join(default_texts)
            moved = switchable.invoke(BADGE, config={"configurable": {"memory_store": other}})
            assert [d.page_content for d in moved] == ["My badge ID is ZZ-0001 at the new site."]
            fields = {k: v for k, v in base.__dict__.items() if k in type(base).model_fields}
            first, again = (type(base)(**{**fields, "store": other}) for _ in range(2))  # as LangChain rebuilds
            assert first.ensemble is again.ensemble and first.ensemble.store is other  # one pool, one hung-arm record
        chain = QueryOptimizerChain(store=seeded_store, namespace=NS)
        switched = chain.configurable_fields(store=ConfigurableField(id="s")).with_config(
            configurable={"s": other})
        assert switched.invoke(BADGE)  # planned against the other store: no disagreement
        single = BM25MemoryRetriever(store=seeded_store, namespace=NS)
        rebuilt = BM25MemoryRetriever(store=other, ensemble=single.ensemble, namespace=NS)
        assert rebuilt.ensemble.store is other and rebuilt.ensemble.optimizer is False  # still "every arm"
        with pytest.raises(ValueError, match="disagree"):  # a caller's ensemble is never replaced
            LCEnsemble(store=other, ensemble=EnsembleMemory(seeded_store), namespace=NS)
    finally:
        other.close()


@pytest.mark.parametrize("name", ["GraphMemoryRetriever", "TemporalMemoryRetriever"])
def test_types_is_a_filter_in_the_graph_and_temporal_arms_too(seeded_store: MemoryStore, name: str) -> None:
    """The graph and temporal retrievers accepted `types` and ignored it: a user asking the graph for
    preferences got facts and events (found by the LlamaIndex probe). Every arm applies it now: in
    both frameworks, at construction and per call, only memories of those types come back."""
    import langchain_fused_memory as lc
    import llama_index.retrievers.fused_memory as li

    query = "what did Sarah do last week?"
    for docs in (getattr(lc, name)(store=seeded_store, namespace=NS, now=NOW, types=["event"]).invoke(query),
                 getattr(lc, name)(store=seeded_store, namespace=NS, now=NOW).invoke(query, types=["event"])):
        assert all(d.metadata["type"] == "event" for d in docs)
    nodes = getattr(li, name)(seeded_store, namespace=NS, now=NOW, types=["preference"]).retrieve(query)
    assert all(n.node.metadata["type"] == "preference" for n in nodes)


def test_the_callers_metadata_is_top_level_in_both_adapters(store: MemoryStore) -> None:
    """A LangChain document prompt reads `{source}` from `Document.metadata`, and LlamaIndex
    postprocessors read node metadata by key, so the caller's keys are top level, not only under
    `metadata["metadata"]`. A key named like one of ours keeps ours; the caller's value is still
    under `metadata`."""
    from fused_memory.types import Memory

    store.add(Memory(id="m1", text="the deploy key rotates every Friday", namespace="meta",
                     metadata={"source": "slack#ops", "score": "caller's", "tags": ["ops"]}))
    doc = LCEnsemble(store=store, namespace="meta", now=NOW).invoke("deploy key")[0]
    node = LIEnsemble(store, namespace="meta", now=NOW).retrieve("deploy key")[0].node
    for metadata in (doc.metadata, node.metadata):
        assert metadata["source"] == "slack#ops" and metadata["tags"] == ["ops"]
        assert isinstance(metadata["score"], float)
        assert metadata["metadata"] == {"source": "slack#ops", "score": "caller's", "tags": ["ops"]}
    assert "source: slack#ops" in node.get_content(metadata_mode="llm")


def test_memory_times_are_shown_in_the_zone_the_query_was_asked_in(seeded_store: MemoryStore) -> None:
    """Windows follow `now`'s zone, but the times came back in UTC: a Friday-evening dinner asked
    about from Los Angeles was shown to the model as Saturday."""
    from zoneinfo import ZoneInfo

    from langchain_fused_memory import memory_tool as lc_tool

    la = NOW.astimezone(ZoneInfo("America/Los_Angeles"))
    utc_docs = LCEnsemble(store=seeded_store, namespace=NS, now=NOW).invoke(QUERY)
    la_docs = LCEnsemble(store=seeded_store, namespace=NS, now=la).invoke(QUERY)
    nodes = LIEnsemble(seeded_store, namespace=NS, now=la).retrieve(QUERY)
    dated = [(u, d) for u, d in zip(utc_docs, la_docs, strict=True) if u.metadata["event_at"]]
    assert dated and all(d.metadata["event_at"][-6:] in ("-07:00", "-08:00") for _, d in dated)  # PDT / PST
    assert all(datetime.fromisoformat(u.metadata["event_at"]) == datetime.fromisoformat(d.metadata["event_at"])
               for u, d in dated)  # the same instants
    assert [n.node.metadata["event_at"] for n in nodes] == [d.metadata["event_at"] for d in la_docs]
    content = lc_tool(LCEnsemble(store=seeded_store, namespace=NS, now=la)).invoke({"query": QUERY})
    assert dated[0][1].metadata["event_at"] in content
