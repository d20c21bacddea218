"""The LangChain adapter beyond the standard suite: Document shape, per-call overrides, tracing
(ls params, child runs per arm, failures), the tool's artifact, and the optimizer Runnable."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import AsyncCallbackHandler, BaseCallbackHandler
from langchain_core.messages import ToolMessage
from langchain_core.runnables import ConfigurableField

from fused_memory.ensemble import EnsembleMemory
from fused_memory.errors import BackendUnavailable, QueryError
from fused_memory.results import ARMS, Hit, QueryPlan
from fused_memory.store.memory_store import MemoryStore
from fused_memory.types import MemoryType
from langchain_fused_memory import (
    DenseMemoryRetriever,
    EnsembleMemoryRetriever,
    QueryOptimizerChain,
    TemporalMemoryRetriever,
    memory_tool,
)
from langchain_fused_memory.tools import NO_MEMORIES

from ._seed import NOW, NS, OTHER_NS, QUERY


class Recorder(BaseCallbackHandler):
    """Every retriever and chain run: (kind, name, run_id, parent_run_id, metadata, outcome)."""

    def __init__(self) -> None:
        self.runs: dict[UUID, dict[str, Any]] = {}

    def _start(self, kind: str, run_id: UUID, parent_run_id: UUID | None, **kw: Any) -> None:
        self.runs[run_id] = {"kind": kind, "name": kw.get("name"), "parent": parent_run_id,
                             "metadata": kw.get("metadata") or {}, "tags": kw.get("tags") or []}

    def on_retriever_start(self, serialized: Any, query: str, *, run_id: UUID,
                           parent_run_id: UUID | None = None, **kw: Any) -> None:
        self._start("retriever", run_id, parent_run_id, **kw)

    def on_retriever_end(self, documents: Any, *, run_id: UUID, **kw: Any) -> None:
        self.runs[run_id]["documents"] = documents

    def on_retriever_error(self, error: BaseException, *, run_id: UUID, **kw: Any) -> None:
        self.runs[run_id]["error"] = str(error)

    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: UUID,
                       parent_run_id: UUID | None = None, **kw: Any) -> None:
        self._start("chain", run_id, parent_run_id, **kw)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kw: Any) -> None:
        self.runs[run_id]["outputs"] = outputs

    def root(self) -> tuple[UUID, dict[str, Any]]:
        [(rid, run)] = [(r, v) for r, v in self.runs.items() if v["parent"] is None]
        return rid, run

    def children(self, parent: UUID) -> list[dict[str, Any]]:
        return [v for v in self.runs.values() if v["parent"] == parent]


class AsyncRecorder(Recorder, AsyncCallbackHandler):  # type: ignore[misc]
    """The same records through the async callback path (sync methods are allowed on async handlers)."""


@pytest.fixture
def ensemble_retriever(seeded_store: MemoryStore) -> EnsembleMemoryRetriever:
    return EnsembleMemoryRetriever(store=seeded_store, namespace=NS, now=NOW, k=5)


def test_documents_carry_id_text_and_json_safe_metadata(ensemble_retriever: EnsembleMemoryRetriever,
                                                         core: EnsembleMemory) -> None:
    docs = ensemble_retriever.invoke(QUERY)
    result = core.retrieve(QUERY, namespace=NS, k=5, now=NOW)
    assert [d.id for d in docs] == result.ids()
    for doc, hit in zip(docs, result.hits, strict=True):
        meta = doc.metadata
        json.dumps(meta, allow_nan=False)  # JSON-safe, nothing to coerce
        assert doc.page_content == hit.memory.text
        assert meta["memory_id"] == hit.memory.id
        assert meta["type"] == hit.memory.type.value
        assert meta["event_at"] == (hit.memory.event_at.isoformat() if hit.memory.event_at else None)
        assert meta["entities"] == list(hit.memory.entities)
        assert meta["score"] == pytest.approx(hit.score) and meta["rank"] == hit.rank
        assert meta["explain"] == hit.explain()
        assert [c["arm"] for c in meta["contributions"]] == meta["arms"] == [c.arm for c in hit.contributions]
        assert set(meta["arms"]) <= set(ARMS)
        assert meta["skipped_arms"] == dict(result.plan.skipped)
        assert meta["failed_arms"] == {}
    assert any(d.metadata["event_at"] for d in docs), "the query is about events: some carry a time"


def test_per_call_overrides(ensemble_retriever: EnsembleMemoryRetriever) -> None:
    assert len(ensemble_retriever.invoke(QUERY, k=2)) == 2
    bob = ensemble_retriever.invoke("badge ID", namespace=OTHER_NS)
    assert bob and {d.metadata["namespace"] for d in bob} == {OTHER_NS}
    prefs = ensemble_retriever.invoke("what do I like?", types=["preference"])
    assert prefs and {d.metadata["type"] for d in prefs} == {"preference"}
    temporal = TemporalMemoryRetriever(store=ensemble_retriever.store, namespace=NS, k=5)
    yesterday = temporal.invoke("what did I do yesterday?", now=NOW)
    assert yesterday and all(d.metadata["event_at"] for d in yesterday)
    a_month_later = (NOW + timedelta(days=30)).isoformat()  # nothing was recorded the day before that
    assert temporal.invoke("what did I do yesterday?", now=a_month_later) == []


def test_bad_arguments_are_clear(ensemble_retriever: EnsembleMemoryRetriever, seeded_store: MemoryStore) -> None:
    with pytest.raises(TypeError, match="unexpected keyword"):
        ensemble_retriever.invoke(QUERY, top_k=3)
    with pytest.raises(QueryError):
        ensemble_retriever.invoke(QUERY, k=0)
    with pytest.raises(QueryError, match="timezone-aware"):
        ensemble_retriever.invoke(QUERY, now=datetime(2026, 3, 20))
    with pytest.raises(TypeError, match="MemoryStore"):
        DenseMemoryRetriever(namespace=NS)
    other = EnsembleMemory(MemoryStore.embedded(seeded_store.config.path + "-unused"))
    with pytest.raises(ValueError, match="disagree"):
        DenseMemoryRetriever(store=seeded_store, ensemble=other)


def test_store_or_ensemble(seeded_store: MemoryStore, core: EnsembleMemory) -> None:
    by_store = EnsembleMemoryRetriever(store=seeded_store, namespace=NS, now=NOW)
    by_ensemble = EnsembleMemoryRetriever(ensemble=core, namespace=NS, now=NOW)
    given_as_store = EnsembleMemoryRetriever(store=core, namespace=NS, now=NOW)
    assert by_ensemble.ensemble is core and given_as_store.ensemble is core and by_ensemble.store is seeded_store
    ids = [d.id for d in by_store.invoke(QUERY)]
    assert ids == [d.id for d in by_ensemble.invoke(QUERY)] == [d.id for d in given_as_store.invoke(QUERY)]


def _check_trace(rec: Recorder, result_plan: QueryPlan, name: str) -> None:
    root_id, root = rec.root()
    assert root["kind"] == "retriever" and root["name"] == name
    assert root["metadata"]["ls_retriever_name"] == "fused_memory_ensemble"
    children = rec.children(root_id)
    [optimizer] = [c for c in children if c["kind"] == "chain"]
    assert optimizer["name"] == "QueryOptimizerChain"
    assert optimizer["outputs"]["arms"] == list(result_plan.arms)
    arms = [c for c in children if c["kind"] == "retriever"]
    assert [c["name"] for c in arms] == [f"fused_memory:{a}" for a in result_plan.arms]
    assert len(result_plan.arms) >= 4, "the query plans most arms"
    for run, arm in zip(arms, result_plan.arms, strict=True):
        assert run["metadata"]["ls_retriever_name"] == f"fused_memory_{arm}"
        assert run["metadata"]["elapsed_ms"] >= 0
        ranks = [d.metadata["arm_rank"] for d in run["documents"]]
        assert ranks == sorted(ranks)
        assert all(d.id in {x.id for x in root["documents"]} for d in run["documents"])
    assert any(run["documents"] for run in arms)


def test_child_runs_per_arm(ensemble_retriever: EnsembleMemoryRetriever, core: EnsembleMemory) -> None:
    rec = Recorder()
    ensemble_retriever.invoke(QUERY, config={"callbacks": [rec]})
    _check_trace(rec, core.retrieve(QUERY, namespace=NS, k=5, now=NOW).plan, "EnsembleMemoryRetriever")


async def test_child_runs_per_arm_async(ensemble_retriever: EnsembleMemoryRetriever, core: EnsembleMemory) -> None:
    rec = AsyncRecorder()
    await ensemble_retriever.ainvoke(QUERY, config={"callbacks": [rec], "run_name": "memory"})
    _check_trace(rec, core.retrieve(QUERY, namespace=NS, k=5, now=NOW).plan, "memory")


def test_single_arm_run_names_its_arm(seeded_store: MemoryStore) -> None:
    rec = Recorder()
    DenseMemoryRetriever(store=seeded_store, namespace=NS, now=NOW).invoke(QUERY, config={"callbacks": [rec]})
    root_id, root = rec.root()
    assert root["metadata"]["ls_retriever_name"] == "fused_memory_dense"
    assert [c["name"] for c in rec.children(root_id) if c["kind"] == "retriever"] == ["fused_memory:dense"]


class Exploding:
    name = "lexical"

    def search(self, request: Any) -> list[Hit]:
        raise RuntimeError("bm25 index exploded")


class GhostArm:
    """BM25 stand-in whose one hit names a memory the store cannot read."""
    name = "lexical"

    def search(self, request: Any) -> list[Hit]:
        return [Hit("ghost", 1.0)]


class Unreadable:
    """The seeded store, except that reading memories by id fails (the hydration round trip)."""

    def __init__(self, inner: MemoryStore) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def get_many(self, *args: Any, **kw: Any) -> Any:
        raise BackendUnavailable("qdrant went away")


def test_an_arm_whose_hits_could_not_be_read_ends_its_run_and_is_flagged(seeded_store: MemoryStore) -> None:
    ens = EnsembleMemory(Unreadable(seeded_store), arms={"lexical": GhostArm()})  # type: ignore[arg-type]
    rec = Recorder()
    docs = EnsembleMemoryRetriever(ensemble=ens, namespace=NS, now=NOW).invoke(QUERY, config={"callbacks": [rec]})
    assert docs and "ghost" not in [d.id for d in docs]  # dense carried its memories; the ghost is left out
    assert docs[0].metadata["failed_arms"]["lexical"].startswith("hydration: BackendUnavailable: qdrant went away")
    root_id, _ = rec.root()
    [lexical] = [c for c in rec.children(root_id) if c["name"] == "fused_memory:lexical"]
    assert "error" not in lexical and lexical["documents"] == []  # it answered; nothing of it survived
    assert "qdrant went away" in lexical["metadata"]["partial_failure"]
    ens.close()


def test_failed_arm_is_an_error_run_and_flagged(seeded_store: MemoryStore) -> None:
    broken = EnsembleMemory(seeded_store, arms={"lexical": Exploding()})
    rec = Recorder()
    docs = EnsembleMemoryRetriever(ensemble=broken, namespace=NS, now=NOW).invoke(QUERY, config={"callbacks": [rec]})
    assert docs, "the other arms still answer"
    assert "lexical" in docs[0].metadata["failed_arms"]
    assert "bm25 index exploded" in docs[0].metadata["failed_arms"]["lexical"]
    root_id, _ = rec.root()
    [failed] = [c for c in rec.children(root_id) if c["name"] == "fused_memory:lexical"]
    assert "bm25 index exploded" in failed["error"]
    broken.close()


def test_memory_tool_artifact_holds_the_documents(ensemble_retriever: EnsembleMemoryRetriever) -> None:
    tool = memory_tool(ensemble_retriever, "recall", "Search the user's memories.")
    assert tool.name == "recall" and tool.response_format == "content_and_artifact"
    message = tool.invoke({"type": "tool_call", "id": "call-1", "name": "recall", "args": {"query": QUERY}})
    assert isinstance(message, ToolMessage)
    docs = message.artifact
    assert [d.id for d in docs] == [d.id for d in ensemble_retriever.invoke(QUERY)]
    assert docs[0].page_content in message.content


async def test_memory_tool_async(ensemble_retriever: EnsembleMemoryRetriever) -> None:
    tool = memory_tool(ensemble_retriever, "recall", "Search the user's memories.")
    message = await tool.ainvoke({"type": "tool_call", "id": "c", "name": "recall", "args": {"query": QUERY}})
    assert message.artifact and message.artifact[0].page_content in message.content


@pytest.mark.parametrize("query", ["", "   ", "x" * 20_000])
async def test_memory_tool_hands_a_refused_query_back_to_the_model(ensemble_retriever: EnsembleMemoryRetriever,
                                                                   query: str) -> None:
    """A QueryError (a ValueError) used to end the agent's run, even with handle_tool_error set;
    the model now gets an error ToolMessage it can act on, sync and async."""
    tool = memory_tool(ensemble_retriever, "recall", "Search the user's memories.")
    call = {"type": "tool_call", "id": "c", "name": "recall", "args": {"query": query}}
    for message in (tool.invoke(call), await tool.ainvoke(call)):
        assert isinstance(message, ToolMessage) and message.status == "error"
        assert "query" in message.content and message.artifact is None


def test_memory_tool_tells_the_model_each_memorys_type_and_event_time(
        ensemble_retriever: EnsembleMemoryRetriever) -> None:
    """"When did I...?" is half of what agents ask a memory: an event reaches the model with its time
    (not the bare text with the date only in the artifact)."""
    tool = memory_tool(ensemble_retriever, "recall", "Search the user's memories.")
    message = tool.invoke({"type": "tool_call", "id": "c", "name": "recall", "args": {"query": QUERY}})
    paragraphs = message.content.split("\n\n")
    assert len(paragraphs) == len(message.artifact) > 0
    for doc, line in zip(message.artifact, paragraphs, strict=True):
        when = doc.metadata["event_at"] if doc.metadata["type"] == "event" else None
        head = f"[{doc.metadata['type']}, {when}] " if when else f"[{doc.metadata['type']}] "
        assert line == head + doc.page_content
    assert any(d.metadata["event_at"] for d in message.artifact)  # the query asks about last week


def test_memory_line_dates_what_has_a_time_and_keeps_one_memory_one_paragraph() -> None:
    """A fact the caller dated ("my passport expires", event_at the 25th) showed no date, so the
    model could not answer "when does my passport expire?"."""
    from langchain_core.documents import Document

    from langchain_fused_memory.tools import memory_line
    fact = Document("Badge renewed.\n\nNew number E-1.",
                    metadata={"type": "fact", "event_at": "2025-01-02T00:00:00+00:00"})
    assert memory_line(fact) == "[fact, 2025-01-02T00:00:00+00:00] Badge renewed.\nNew number E-1."
    undated = Document("Prefers aisle seats.", metadata={"type": "preference", "event_at": None})
    assert memory_line(undated) == "[preference] Prefers aisle seats."
    spaced = Document("a\n \n \nb", metadata={"type": "fact"})  # lines of spaces read as blank too
    assert memory_line(spaced) == "[fact] a\nb"
    event = Document("Lunch.", metadata={"type": "event", "event_at": "2026-03-18T17:00:00+00:00"})
    assert memory_line(event) == "[event, 2026-03-18T17:00:00+00:00] Lunch."


async def test_memory_tool_says_when_nothing_matched(seeded_store: MemoryStore) -> None:
    empty = EnsembleMemoryRetriever(store=seeded_store, namespace="nobody-here", now=NOW)
    tool = memory_tool(empty, "recall", "Search the user's memories.")
    call = {"type": "tool_call", "id": "c", "name": "recall", "args": {"query": QUERY}}
    for message in (tool.invoke(call), await tool.ainvoke(call)):
        assert message.status == "success" and message.content == NO_MEMORIES and message.artifact == []


@pytest.mark.parametrize("args", [{}, {"query": None}, {"query": 123}, {"question": QUERY}])
async def test_memory_tool_hands_malformed_arguments_back_to_the_model(
        ensemble_retriever: EnsembleMemoryRetriever, args: dict[str, Any]) -> None:
    """A model that calls the tool with the wrong arguments gets an error it can correct; the
    ValidationError used to end the agent's run."""
    tool = memory_tool(ensemble_retriever, "recall", "Search the user's memories.")
    call = {"type": "tool_call", "id": "c", "name": "recall", "args": args}
    for message in (tool.invoke(call), await tool.ainvoke(call)):
        assert isinstance(message, ToolMessage) and message.status == "error" and "query" in message.content


def test_memory_tool_runs_the_retriever_under_the_tool_run(ensemble_retriever: EnsembleMemoryRetriever) -> None:
    """The retriever's run stays nested under the tool's, with the tool's function wrapped for its
    errors (LangChain carries the parent run in context variables, so this holds with or without
    `functools.wraps`; the test pins the behaviour, not the mechanism)."""
    rec = Recorder()
    tool = memory_tool(ensemble_retriever, "recall", "Search the user's memories.")
    tool.invoke({"type": "tool_call", "id": "c", "name": "recall", "args": {"query": QUERY}},
                config={"callbacks": [rec]})
    [ensemble_run] = [r for r in rec.runs.values() if r["name"] == "EnsembleMemoryRetriever"]
    assert ensemble_run["parent"] is not None  # the tool's run (this handler does not record tools)


def test_query_optimizer_chain(seeded_store: MemoryStore, core: EnsembleMemory,
                               ensemble_retriever: EnsembleMemoryRetriever) -> None:
    chain = QueryOptimizerChain(store=seeded_store, namespace=NS, now=NOW)
    rec = Recorder()
    plan = chain.invoke(QUERY, config={"callbacks": [rec]})
    assert isinstance(plan, QueryPlan)
    assert plan == core.plan(QUERY, namespace=NS, now=NOW)[1]
    assert plan.reasons and "graph" in plan.arms
    _, root = rec.root()
    assert root["kind"] == "chain" and root["name"] == "QueryOptimizerChain"
    assert ensemble_retriever.optimizer.invoke(QUERY) == plan
    # a bare configurable key is not read (the retrievers do not read it either: that dict is
    # shared by the whole run); a configurable field is
    assert chain.invoke("badge ID", config={"configurable": {"namespace": OTHER_NS}}) == \
        core.plan("badge ID", namespace=NS, now=NOW)[1]
    tenant = chain.configurable_fields(namespace=ConfigurableField(id="tenant"))
    assert tenant.invoke("badge ID", config={"configurable": {"tenant": OTHER_NS}}) == \
        core.plan("badge ID", namespace=OTHER_NS, now=NOW)[1]


async def test_query_optimizer_chain_takes_per_call_options_as_the_retrievers_do(
        seeded_store: MemoryStore, core: EnsembleMemory) -> None:
    """`namespace=` / `now=` per call were accepted and dropped (the plan was the default tenant's,
    at the default time), and a misspelled keyword passed silently."""
    chain = QueryOptimizerChain(store=seeded_store, namespace=NS, now=NOW)
    earlier = NOW - timedelta(days=400)
    want = core.plan(QUERY, namespace=OTHER_NS, now=earlier)[1]
    assert want != core.plan(QUERY, namespace=NS, now=NOW)[1]
    assert chain.invoke(QUERY, namespace=OTHER_NS, now=earlier) == want
    assert await chain.ainvoke(QUERY, namespace=OTHER_NS, now=earlier.isoformat()) == want
    with pytest.raises(TypeError, match="namesapce"):
        chain.invoke(QUERY, namesapce=OTHER_NS)
    with pytest.raises(TypeError, match="namesapce"):
        await chain.ainvoke(QUERY, namesapce=OTHER_NS)


async def test_the_plan_shown_is_the_plan_run_with_forced_types(seeded_store: MemoryStore,
                                                                  core: EnsembleMemory) -> None:
    """`EnsembleMemoryRetriever(types=[...]).optimizer.invoke(q)` showed the rules' plan without the
    forced types, so it was not the plan the retriever ran."""
    retriever = EnsembleMemoryRetriever(store=seeded_store, namespace=NS, now=NOW, types=["fact"])
    plan = retriever.optimizer.invoke(QUERY)
    assert plan.type_hints == {MemoryType.FACT} and plan.hard_filter and "type" in plan.arms
    assert plan == core.plan(QUERY, namespace=NS, now=NOW, types=["fact"])[1]
    assert any("caller types ['fact'] -> every arm keeps only" in r for r in plan.reasons)
    chain = QueryOptimizerChain(store=seeded_store, namespace=NS, now=NOW)
    assert chain.invoke(QUERY, types="preference").type_hints == {MemoryType.PREFERENCE}
    assert (await chain.ainvoke(QUERY, types=["preference"])).type_hints == {MemoryType.PREFERENCE}
    assert chain.invoke(QUERY) == core.plan(QUERY, namespace=NS, now=NOW)[1]
    with pytest.raises(QueryError, match="opinion"):
        chain.invoke(QUERY, types=["opinion"])


async def test_query_optimizer_chain_async(seeded_store: MemoryStore, core: EnsembleMemory) -> None:
    chain = QueryOptimizerChain(store=seeded_store, namespace=NS, now=NOW)
    assert await chain.ainvoke(QUERY) == core.plan(QUERY, namespace=NS, now=NOW)[1]
    composed = chain | (lambda plan: sorted(plan.arms))
    assert composed.invoke(QUERY) == sorted(core.plan(QUERY, namespace=NS, now=NOW)[1].arms)
