"""`FusedMemoryStore` as a LangGraph user meets it: values kept whole and mapped to memory fields,
the fused ranking behind `search(query=...)`, namespaces mapped one-to-one and never leaking across
users (table and hypothesis tests), bad input refused with the field named and nothing written,
and each deliberate difference from `InMemoryStore` (test_langgraph_parity.py shows the rest is
the same). The hashing embedder stands in for MiniLM: these are about the store's plumbing; the
BM25 arm still ranks by the words."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from langgraph.store.base import InvalidNamespaceError, PutOp, SearchItem
from langgraph.store.memory import InMemoryStore

from fused_memory import (
    ConfigurationError,
    EmbeddingMismatch,
    InvalidMemory,
    Memory,
    MemoryStore,
    MemoryType,
    MissingDependency,
)
from fused_memory.embeddings import HashingEmbedder
from langchain_fused_memory import FusedMemoryStore


@pytest.fixture
def lg(store_factory: Any) -> FusedMemoryStore:
    return FusedMemoryStore(store_factory())


def _keys(items: list[Any]) -> list[str]:
    return [i.key for i in items]


# ---------------------------------------------------------------- values and memories
def test_values_come_back_whole_and_their_text_is_what_is_indexed(lg: FusedMemoryStore) -> None:
    value = {"content": "I switched to oat milk", "tags": ["diet"], "score": 0.1 + 0.2, "n": None}
    lg.put(("memories", "u1"), "milk", value)
    item = lg.get(("memories", "u1"), "milk")
    assert item is not None and item.value == value and item.value is not value
    assert item.created_at == item.updated_at and item.created_at.tzinfo is not None
    item.value["tags"].append("mutated")  # a caller's change to what it got back is not stored
    assert lg.get(("memories", "u1"), "milk").value == value  # type: ignore[union-attr]
    [memory] = lg.store.get_many("memories.u1", ["milk"])
    assert memory.text == "I switched to oat milk" and memory.namespace == "memories.u1" and memory.id == "milk"


@pytest.mark.parametrize(("value", "index", "text"), [
    ({"content": {"content": "likes jazz", "kind": "x"}, "kind": "Memory"}, None, "likes jazz"),  # LangMem's manager
    ({"content": {"facts": ["a"]}}, None, '{"facts": ["a"]}'),
    ({"theme": "dark"}, None, '{"theme": "dark"}'),  # LangGraph's "$": the whole value
    ({"title": "Plan", "body": {"text": "ship it"}, "content": "ignored"}, ["title", "body.text"], "Plan\nship it"),
    ({"chapters": [{"t": "one"}, {"t": "two"}]}, ["chapters[*].t"], "one\ntwo"),
])
def test_the_text_comes_from_content_the_index_fields_or_the_whole_value(
        lg: FusedMemoryStore, value: dict[str, Any], index: list[str] | None, text: str) -> None:
    lg.put(("n",), "k", value, index=index)
    assert lg.store.get_many("n", ["k"])[0].text == text and lg.get(("n",), "k").value == value  # type: ignore[union-attr]


def test_type_time_and_entities_are_the_memorys_own_fields(lg: FusedMemoryStore) -> None:
    lg.put(("n",), "trip", {"content": "Flew to Lisbon", "type": "event", "event_at": "2024-05-01T09:00:00+02:00",
                            "entities": ["Lisbon"]})
    [m] = lg.store.get_many("n", ["trip"])
    assert m.type is MemoryType.EVENT and m.event_at == datetime(2024, 5, 1, 7, tzinfo=timezone.utc)
    assert "Lisbon" in m.entities


def test_a_memory_written_by_another_path_reads_as_a_value(lg: FusedMemoryStore) -> None:
    when = datetime(2024, 5, 1, 9, tzinfo=timezone.utc)
    lg.store.add(Memory(text="Lunch with Tom", namespace="memories.u1", id="m1", type="event", event_at=when,
                        entities=("Tom",), session_id="s1", metadata={"source": "chat"}))
    assert lg.get(("memories", "u1"), "m1").value == {  # type: ignore[union-attr]
        "content": "Lunch with Tom", "type": "event", "event_at": when.isoformat(), "entities": ["Tom"],
        "session_id": "s1", "metadata": {"source": "chat"}}
    assert _keys(lg.search(("memories",), filter={"type": "event"})) == ["m1"]


def test_the_store_index_config_takes_fields(store_factory: Any) -> None:
    s = FusedMemoryStore(store_factory(), index={"fields": ["text"]})
    s.put(("n",), "k", {"text": "from the text field", "content": "not this"})
    assert s.store.get_many("n", ["k"])[0].text == "from the text field"
    with pytest.raises(ValueError, match="fields"):
        FusedMemoryStore(s.store, index={"fields": 3})
    with pytest.raises(ConfigurationError, match="not \\['dim'\\]"):
        FusedMemoryStore(s.store, index={"dim": 384})


def _words(texts: list[str]) -> list[list[float]]:
    """An embedding function as LangGraph's docs write one: texts in, vectors out."""
    return [[float(t.count(w)) + 0.01 for w in ("coffee", "tea", "dog")] for t in texts]


def test_the_index_config_embed_is_the_stores_embedder(store_factory: Any) -> None:
    lg = FusedMemoryStore(store_factory(), index={"dims": 3, "embed": _words, "fields": ["text"]})
    lg.put(("n",), "c", {"text": "coffee coffee"})
    lg.put(("n",), "d", {"text": "my dog"})
    assert lg.store.embedder.dim == 3 and "_words" in lg.store.embedder.id.name
    assert lg.search(("n",), query="dog", limit=1)[0].key == "d"
    with pytest.raises(EmbeddingMismatch, match="dims"):
        FusedMemoryStore(store_factory("other"), index={"dims": 5, "embed": _words}).put(("n",), "k", {"text": "x"})


def test_a_store_written_with_another_embedder_refuses_the_index_embed(store_factory: Any) -> None:
    memory = store_factory()
    FusedMemoryStore(memory).put(("n",), "k", {"content": "written with the hashing embedder"})
    with pytest.raises(EmbeddingMismatch):  # open with the other embedder: refused at once
        FusedMemoryStore(memory, index={"dims": 3, "embed": _words})
    memory.close()
    reopened = FusedMemoryStore(store_factory(), index={"dims": 3, "embed": _words})  # same path, not yet open
    with pytest.raises(EmbeddingMismatch):  # refused when it opens, the memories untouched
        reopened.get(("n",), "k")
    reopened.store.close()
    assert FusedMemoryStore(store_factory()).get(("n",), "k").value == {"content": "written with the hashing embedder"}


def test_a_namespace_may_be_a_list_as_langgraph_takes_it(lg: FusedMemoryStore) -> None:
    lg.put(["memories", "u1"], "k", {"content": "from a list"})
    assert lg.get(["memories", "u1"], "k").namespace == ("memories", "u1")
    assert [i.key for i in lg.search(["memories"])] == ["k"]
    assert [i.key for i in lg.search(["memories"], query="from a list")] == ["k"]
    lg.delete(["memories", "u1"], "k")
    assert lg.get(("memories", "u1"), "k") is None


def test_a_provider_string_resolves_through_init_embeddings_or_says_what_is_missing(store_factory: Any) -> None:
    with pytest.raises(ConfigurationError, match="init_embeddings"):  # langchain-openai is installed; no key here
        FusedMemoryStore(store_factory(), index={"dims": 1536, "embed": "openai:text-embedding-3-small"})
    with pytest.raises(ConfigurationError, match="nosuchprovider"):
        FusedMemoryStore(store_factory("b"), index={"dims": 8, "embed": "nosuchprovider:model"})
    with pytest.raises(MissingDependency, match="pip install langchain-cohere"):  # not among our dependencies
        FusedMemoryStore(store_factory("c"), index={"dims": 1024, "embed": "cohere:embed-english-v3.0"})


# ---------------------------------------------------------------- search
def _fill(lg: FusedMemoryStore) -> None:
    lg.put(("memories", "u1"), "coffee", {"content": "I drink dark roast coffee every morning"})
    lg.put(("memories", "u1"), "dog", {"content": "My dog Rex loves the park"})
    lg.put(("memories", "u1"), "settings", {"theme": "dark"}, index=False)
    lg.put(("memories", "u1", "work"), "badge", {"content": "My badge ID is E-47821 for the coffee machine"})
    lg.put(("memories", "u10"), "coffee", {"content": "u10 drinks coffee too"})


def test_a_query_is_ranked_by_the_ensemble_and_the_rest_follows_unscored(lg: FusedMemoryStore) -> None:
    _fill(lg)
    found = lg.search(("memories", "u1"), query="coffee")
    assert all(isinstance(i, SearchItem) for i in found)
    for ns in {tuple(i.namespace) for i in found}:  # each namespace in its own ranking's order
        scored = [i.score for i in found if i.score is not None and tuple(i.namespace) == ns]
        assert scored == sorted(scored, reverse=True) and all(isinstance(s, float) and s >= 0 for s in scored)
    # index=False: listed, never ranked (None); the dog: no arm scored it above 0, so it scores 0.0, as
    # LangGraph's stores score every indexed item under a query
    assert {i.key for i in found if i.score is None} == {"settings"} and found[-1].score is None
    assert [i.score for i in found if i.key == "dog"] == [0.0]
    assert {i.key for i in found[:2]} == {"coffee", "badge"}  # the two coffee memories lead, across namespaces
    assert {tuple(i.namespace) for i in found} == {("memories", "u1"), ("memories", "u1", "work")}
    assert len(found) == 4 and len(lg.search(("memories", "u1"), query="coffee", limit=2)) == 2
    page = lg.search(("memories", "u1"), query="coffee", limit=2, offset=2)
    assert [i.key for i in found[2:]] == [i.key for i in page]
    assert _keys(lg.search(("memories", "u1"), query="coffee", filter={"theme": "dark"})) == ["settings"]


class PreferLast:
    """A reranker that turns the fused order around: the store must keep the order it gives."""

    def rerank(self, query: str, texts: list[str]) -> list[float]:
        return [float(i) for i in range(len(texts))]


def test_namespaces_merge_by_rank_and_the_rerankers_order_stands(store_factory: Any) -> None:
    """Each namespace is its own retrieval (its own plan, its own reranked order), so their fused
    scores do not compare: every namespace's first hit comes before any second one, and within a
    namespace the order is the ensemble's, reranked, not re-sorted by score."""
    from fused_memory import EnsembleMemory

    store = store_factory()
    lg = FusedMemoryStore(ensemble=EnsembleMemory(store, reranker=PreferLast()))
    lg.batch([PutOp(("m", "a"), f"a{i}", {"content": f"coffee note {i} " + "coffee " * (5 - i)}) for i in range(4)]
             + [PutOp(("m", "b"), "b0", {"content": "coffee once"})])
    found = lg.search(("m",), query="coffee")
    ours = lg.ensemble.retrieve("coffee", namespace="m.a", k=10)
    assert ours.reranked_by is not None
    assert _keys([i for i in found if tuple(i.namespace) == ("m", "a")]) == ours.ids()  # the reranked order
    assert set(_keys(found[:2])) == {ours.ids()[0], "b0"}  # each namespace's first before any second


def test_the_store_needs_a_memory_store_to_write_to(store_factory: Any) -> None:
    """The read adapters take an ensemble over any source; the LangGraph store writes, so it is
    refused at construction over anything but a `MemoryStore`, naming what it got."""
    from fused_memory import EnsembleMemory

    store = store_factory()

    class ReadOnly:  # every read of the real store, and no add
        def __getattr__(self, name: str) -> Any:
            if name in ("add", "delete"):
                raise AttributeError(name)
            return getattr(store, name)

    with pytest.raises(ConfigurationError, match="FusedMemoryStore writes memories.*ReadOnly"):
        FusedMemoryStore(ensemble=EnsembleMemory(ReadOnly()))  # type: ignore[arg-type]


def test_without_a_query_newest_first(lg: FusedMemoryStore) -> None:
    for key in ("first", "second", "third"):
        lg.put(("n",), key, {"content": key})
    assert _keys(lg.search(("n",))) == ["third", "second", "first"]
    lg.put(("n",), "first", {"content": "rewritten"})
    assert _keys(lg.search(("n",))) == ["first", "third", "second"]
    assert all(i.score is None for i in lg.search(("n",)))


def test_async_twins_share_the_same_path(lg: FusedMemoryStore) -> None:
    async def run() -> tuple[Any, ...]:
        await lg.aput(("n",), "k", {"content": "async coffee"})
        return (await lg.aget(("n",), "k"), await lg.asearch(("n",), query="coffee"), await lg.alist_namespaces())
    item, found, spaces = asyncio.run(run())
    assert item.value == {"content": "async coffee"} and _keys(found) == ["k"] and found[0].score > 0
    assert spaces == [("n",)]


# ---------------------------------------------------------------- namespaces and isolation
NEIGHBOURS = [("u1",), ("u10",), ("u",), ("U1",), ("u1 ",), ("users", "u1"), ("users", "u10"), ("users", "u1", "notes"),
              ("users", "u1 notes"), ("users",), ("*",), ("%", "u1")]


@pytest.mark.parametrize("query", [None, "secret"])
def test_a_prefix_reaches_only_the_namespaces_under_it(lg: FusedMemoryStore, query: str | None) -> None:
    lg.batch([PutOp(ns, "k", {"content": f"secret of {'/'.join(ns)}", "owner": list(ns)}) for ns in NEIGHBOURS])
    for prefix in [*NEIGHBOURS, ("users", "u"), ("u1", "x"), ("US",)]:
        expected = {ns for ns in NEIGHBOURS if ns[:len(prefix)] == prefix}
        found = lg.search(prefix, query=query, limit=100)
        assert {tuple(i.value["owner"]) for i in found} == expected, prefix
        assert {tuple(i.namespace) for i in found} == expected, prefix
        listed = {ns for ns in NEIGHBOURS  # in list_namespaces, and only there, "*" is any one label
                  if len(ns) >= len(prefix) and all(p in ("*", label) for label, p in zip(ns, prefix, strict=False))}
        assert set(lg.list_namespaces(prefix=prefix)) == listed, prefix


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(spaces=st.lists(st.lists(st.sampled_from(["u1", "u10", "u", "1", "U1", "u1 ", "*", "%", "é", "x\n", "a b"]),
                                min_size=1, max_size=3).map(tuple), min_size=1, max_size=6, unique=True),
       prefix=st.lists(st.sampled_from(["u1", "u10", "u", "*", "é"]), max_size=2).map(tuple),
       query=st.sampled_from([None, "item", "u10"]))
@example(spaces=[("u1",), ("u10",)], prefix=("u1",), query=None)  # labels that are prefixes of each other
@example(spaces=[("u1", "u1"), ("u10", "u1"), ("u1 ",)], prefix=("u1",), query="u10")
@example(spaces=[("u",), ("u1",), ("*",)], prefix=("*",), query="item")  # "*" is literal in a search
def test_no_search_returns_another_namespaces_item(tmp_path_factory: pytest.TempPathFactory,
                                                   spaces: list[tuple[str, ...]], prefix: tuple[str, ...],
                                                   query: str | None) -> None:
    root = uuid.uuid4().hex  # one namespace tree per example; the store is shared by all of them
    lg = _shared_store(tmp_path_factory)
    lg.batch([PutOp((root, *ns), "k", {"content": f"item {' '.join(ns)}", "owner": list(ns)}) for ns in spaces])
    theirs = InMemoryStore()
    theirs.batch([PutOp((root, *ns), "k", {"content": "x", "owner": list(ns)}) for ns in spaces])
    expected = {ns for ns in spaces if ns[:len(prefix)] == prefix}
    found = lg.search((root, *prefix), query=query, limit=50)
    assert {tuple(i.value["owner"]) for i in found} == expected
    assert {tuple(i.value["owner"]) for i in theirs.search((root, *prefix), limit=50)} == expected
    assert sorted(lg.list_namespaces(prefix=(root, *prefix))) == theirs.list_namespaces(prefix=(root, *prefix))


_SHARED: dict[str, FusedMemoryStore] = {}


def _shared_store(factory: pytest.TempPathFactory) -> FusedMemoryStore:
    if "store" not in _SHARED:
        path = factory.mktemp("langgraph-isolation")
        _SHARED["store"] = FusedMemoryStore(MemoryStore.embedded(path, embedder=HashingEmbedder(dim=64), ner=False))
    return _SHARED["store"]


@pytest.fixture(scope="module", autouse=True)
def _close_shared() -> Any:
    yield
    if "store" in _SHARED:
        _SHARED.pop("store").store.close()


def test_namespaces_map_one_to_one(lg: FusedMemoryStore) -> None:
    lg.put(("memories", "u1"), "k", {"content": "x"})
    assert lg.store.namespaces() == ["memories.u1"]
    lg.store.add([Memory(text="by a tool", namespace="alice"), Memory(text="no tuple", namespace="a..b"),
                  Memory(text="no tuple either", namespace=".lead")])
    assert lg.list_namespaces() == [("alice",), ("memories", "u1")]  # "a..b" has an empty label: not shown
    assert [i.value["content"] for i in lg.search(("alice",))] == ["by a tool"]


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize(("namespace", "message"), [
    ((), "empty"), (("a.b",), "period"), (("a", ""), "empty"), ((" ",), "blank label"), (("a", 1), "string"),
    (("bad\ud800",), "Unicode"), ("a", "tuple"), (("x" * 20_000,), "16384"),
])
def test_a_namespace_that_cannot_be_mapped_is_refused_naming_it(lg: FusedMemoryStore, namespace: Any,
                                                               message: str) -> None:
    with pytest.raises(InvalidNamespaceError, match=message):
        lg.batch([PutOp(namespace, "k", {"content": "x"})])
    assert lg.store.namespaces() == []


@pytest.mark.parametrize(("value", "message"), [
    ("a string", "value must be a dict"), ({"content": " "}, r'value\["content"\] is empty'),
    ({"content": {"content": ""}}, r'value\["content"\]\["content"\] is empty'),
    ({"content": "x", "event_at": "2024-05-01T09:00:00"}, r'value\["event_at"\].*no time zone'),
    ({"content": "x", "event_at": "last tuesday"}, r'value\["event_at"\] must be an ISO 8601'),
    ({"content": "x", "type": "bookmark"}, r'value\["type"\].*fact, preference, event, entity'),
    ({"content": "x", "entities": "Tom"}, r'value\["entities"\] must be a list'),
    ({"content": "x", "when": datetime(2024, 1, 1)}, "value.when has type datetime"),
    ({"content": "x", 1: "int key"}, "not a string"),
])
def test_a_bad_value_is_refused_naming_the_field_and_the_batch_writes_nothing(
        lg: FusedMemoryStore, value: Any, message: str) -> None:
    lg.put(("n",), "kept", {"content": "before"})
    with pytest.raises(InvalidMemory, match=message):
        lg.batch([PutOp(("n",), "new", {"content": "fine"}), PutOp(("n",), "kept", None),
                  PutOp(("n",), "bad", value)])
    assert _keys(lg.search(("n",))) == ["kept"]


def test_keys_and_options_are_checked(lg: FusedMemoryStore) -> None:
    with pytest.raises(InvalidMemory, match="key must be a non-empty string"):
        lg.put(("n",), "", {"content": "x"})  # an empty id would be derived from the text
    with pytest.raises(ValueError, match="ttl must be a number of minutes"):
        lg.put(("n",), "k", {"content": "x"}, ttl="10")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="ttl must be a number of minutes"):
        lg.batch([PutOp(("n",), "k", {"content": "x"}, ttl=float("nan"))])
    with pytest.raises(ValueError, match="index must be False, None or a list"):
        lg.put(("n",), "k", {"content": "x"}, index="content")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"limit must be an integer >= 0"):
        lg.search(("n",), limit=-1)
    with pytest.raises(ValueError, match=r"operator '\$in' is not supported"):
        lg.search(("n",), filter={"a": {"$in": [1]}})
    assert lg.supports_ttl is True and lg.store.namespaces() == []


# ---------------------------------------------------------------- TTL
_NS = ("n",)
#: (ttl config, the read, whether it pushes the expiry back). A read's `refresh_ttl` decides, as in
#: PostgresStore: given, it wins whatever the config says; left out, it is the config's
#: `refresh_on_read` (a config without the key refreshes nothing, as SqliteStore reads it), and True
#: on a store built without a config (`BaseStore`'s default, which PostgresStore follows).
REFRESHES = [
    pytest.param({"default_ttl": 10}, lambda s: s.get(_NS, "k"), False, id="get-default-config-without-key"),
    pytest.param({"default_ttl": 10}, lambda s: s.get(_NS, "k", refresh_ttl=True), True,
                 id="get-refresh-config-without-key"),
    pytest.param(None, lambda s: s.get(_NS, "k", refresh_ttl=True), True, id="get-refresh-no-config"),
    pytest.param(None, lambda s: s.get(_NS, "k"), True, id="get-default-no-config"),
    pytest.param(None, lambda s: s.search(_NS, query="apples", refresh_ttl=True), True, id="search-query"),
    pytest.param(None, lambda s: s.search(_NS, refresh_ttl=True), True, id="search-listing"),
    pytest.param(None, lambda s: s.get(_NS, "k", refresh_ttl=False), False, id="get-no-refresh"),
    pytest.param(None, lambda s: s.list_namespaces(), False, id="list-namespaces"),
    pytest.param({"refresh_on_read": False}, lambda s: s.get(_NS, "k"), False, id="get-default-config-off"),
    pytest.param({"refresh_on_read": False}, lambda s: s.get(_NS, "k", refresh_ttl=True), True,
                 id="get-refresh-config-off"),
    pytest.param({"refresh_on_read": False}, lambda s: s.search(_NS, query="apples", refresh_ttl=True), True,
                 id="search-refresh-config-off"),
    pytest.param({"refresh_on_read": True}, lambda s: s.get(_NS, "k", refresh_ttl=False), False,
                 id="get-no-refresh-config-on"),
    pytest.param({"refresh_on_read": True}, lambda s: asyncio.run(s.aget(_NS, "k", refresh_ttl=True)), True,
                 id="aget-refresh-config-on"),
]


@pytest.mark.parametrize(("ttl", "read", "refreshed"), REFRESHES)
def test_a_read_refreshes_the_ttl_when_it_asks_to_whatever_the_config(
        store_factory: Any, ttl: dict[str, Any] | None, read: Any, refreshed: bool) -> None:
    """An item put with `ttl=` and read with `refresh_ttl=True` on a store built without a ttl
    config expired on its first deadline (LangGraph's `test_store_ttl` failed that way)."""
    lg = FusedMemoryStore(store_factory(), ttl=ttl)
    lg.put(_NS, "k", {"content": "apples are on the list"}, ttl=10)
    soon = datetime.now(timezone.utc) + timedelta(seconds=30)
    lg.store.set_expiry("n", ["k"], soon)  # as if 9.5 of its 10 minutes had passed
    read(lg)
    [memory] = lg.store.get_many("n", ["k"])
    assert memory.expires_at is not None
    if refreshed:  # its own TTL again, counted from the read
        assert memory.expires_at > datetime.now(timezone.utc) + timedelta(minutes=9)
    else:
        assert abs(memory.expires_at - soon) < timedelta(milliseconds=1)


@pytest.mark.slow  # waits out TTL deadlines
def test_an_item_read_with_refresh_outlives_its_first_deadline(store_factory: Any) -> None:
    """LangGraph's `test_store_ttl`, on a store built without a ttl config, with the clock moved by
    setting the expiry instead of sleeping."""
    lg = FusedMemoryStore(store_factory())
    lg.put(_NS, "k", {"content": "apples are on the list"}, ttl=0.1)
    lg.store.set_expiry("n", ["k"], datetime.now(timezone.utc) + timedelta(seconds=2))
    assert lg.get(_NS, "k", refresh_ttl=True) is not None  # its deadline is now 6 s away again
    time.sleep(2.5)  # past the first deadline
    assert lg.get(_NS, "k", refresh_ttl=False) is not None
    assert _keys(lg.search(_NS, query="apples", refresh_ttl=False)) == ["k"]


# ---------------------------------------------------------------- deliberate differences
def test_differences_from_in_memory_store(lg: FusedMemoryStore) -> None:
    """Each is documented in `langgraph_store` / `langgraph_items`."""
    theirs = InMemoryStore()
    for s in (theirs, lg):
        s.put(("n",), "has", {"content": "x", "n": 5})
        s.put(("n",), "lacks", {"content": "y"})
        s.put(("gone",), "k", {"content": "z"})
        s.delete(("gone",), "k")
        s.get(("read", "only"), "k")
    # a namespace emptied or only read is listed by InMemoryStore (its dict keeps the key), not by ours
    assert theirs.list_namespaces() == [("gone",), ("n",), ("read", "only")] and lg.list_namespaces() == [("n",)]
    # a comparison on a missing field: InMemoryStore fails the search, ours leaves the item out
    with pytest.raises(TypeError):
        theirs.search(("n",), filter={"n": {"$gt": 1}})
    assert _keys(lg.search(("n",), filter={"n": {"$gt": 1}})) == ["has"]
    # values must be JSON and keys non-empty (InMemoryStore keeps any object under any key)
    theirs.put(("n",), "", {"when": datetime(2024, 1, 1)})
    with pytest.raises(InvalidMemory):
        lg.put(("n",), "", {"content": "x"})
    # a dotted filter key reaches into nested values, as in LangGraph's SQL stores (InMemoryStore reads it as one key)
    for s in (theirs, lg):
        s.put(("d",), "k", {"content": "x", "meta": {"kind": "fact"}})
    assert theirs.search(("d",), filter={"meta.kind": "fact"}) == []
    assert _keys(lg.search(("d",), filter={"meta.kind": "fact"})) == ["k"]
    # without a query: insertion order there, newest first here
    assert _keys(theirs.search(("n",))) == ["has", "lacks", ""] and _keys(lg.search(("n",))) == ["lacks", "has"]


def test_the_store_lives_beside_the_other_paths(tmp_path: Path) -> None:
    """Constructing does no I/O, and a store given as an ensemble is its store."""
    from fused_memory import EnsembleMemory
    ms = MemoryStore.embedded(tmp_path / "s", embedder=HashingEmbedder(dim=64), ner=False)
    ens = EnsembleMemory(ms)
    lg = FusedMemoryStore(ens)
    assert lg.store is ms and lg.ensemble is ens and not (tmp_path / "s").exists()
    ens.close()
