"""`FusedMemoryStore` behaves as LangGraph's own `InMemoryStore` on the same calls.

One sequence of operations (put, get, update, delete, search with prefixes, filters, limit and
offset, list_namespaces with prefix / suffix / "*" / max_depth / limit / offset, a mixed `batch`,
and every namespace and TTL error LangGraph raises) runs against both stores, through the sync
methods and through their async twins, and the results are compared:

* exactly: get results, errors (by LangGraph's classes), `list_namespaces` (sorted by both);
* as sets: searches without a query (`InMemoryStore` lists in insertion order, LangGraph's SQL
  stores and ours newest first: the order is each store's own);
* searches with a query: as sets when the limit covers everything (both return every item: ours
  ranks what the arms find and appends the rest unscored), by size otherwise; the ranked order
  is ours (see test_langgraph_store.py for what it is).

The cases come from LangGraph's own store tests (libs/checkpoint*/tests/test_store.py: basic ops,
segment boundaries, literal wildcards, case, labels with a trailing newline, list pagination).
The deliberate differences are asserted in test_langgraph_store.py, not here; they are why the
sequence never reads a namespace it did not write (`InMemoryStore` then lists it, empty) and why
every item a comparison filter reads has the field (`InMemoryStore` fails the search otherwise). Runs on both vector
backends, with the hashing embedder (the comparison is about the store's bookkeeping, not ranking).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from langgraph.store.base import BaseStore, GetOp, InvalidNamespaceError, Item, ListNamespacesOp, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from langchain_fused_memory import FusedMemoryStore

#: The classes an error is compared by, most specific first (our errors subclass ValueError too).
ERRORS = (InvalidNamespaceError, NotImplementedError, ValueError, TypeError)


@dataclass(frozen=True)
class Step:
    """One public call: `method` on the store (its async twin when run async), compared as `how`."""

    method: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    how: str = "exact"  # "exact", "set" (order is the store's own) or "size"


def put(ns: tuple[str, ...], key: Any, value: Any, **kw: Any) -> Step:
    return Step("put", (ns, key, value), kw)


def get(ns: tuple[str, ...], key: str) -> Step:
    return Step("get", (ns, key))


def search(prefix: tuple[str, ...], how: str = "set", **kw: Any) -> Step:
    return Step("search", (prefix,), kw, how)


def ls(**kw: Any) -> Step:
    return Step("list_namespaces", (), kw)


def batch(ops: list[Any], how: str = "exact") -> Step:
    return Step("batch", (ops,), {}, how)


DOCS = [
    (("test", "foo"), "doc1", {"content": "the quick brown fox", "n": 1, "meta": {"kind": "fact", "tags": ["a", "b"]}}),
    (("test", "foo"), "doc2", {"content": "lazy dog sleeps", "n": 2, "meta": {"kind": "event", "tags": ["b"]}}),
    (("test", "bar"), "doc3", {"content": "a fox and a dog", "n": 3, "meta": {"kind": "fact", "tags": ["a", "b"]}}),
    (("test", "bar", "deep"), "doc4", {"content": "deeper notes", "n": 4.5, "flag": True}),
    (("foobar",), "doc5", {"content": "segment boundary"}),
    (("foo",), "doc6", {"theme": "dark", "size": 12}),
    (("users", "alice\n"), "doc7", {"content": "trailing newline label"}),
    (("users", "alice"), "doc8", {"content": "plain alice"}),
    (("Users", "alice"), "doc9", {"content": "capital users"}),
    (("a", "b", "c"), "x", {"content": "abc"}),
    (("a", "b", "d"), "x", {"content": "abd"}),
    (("a", "c", "c"), "x", {"content": "acc"}),
    (("%", "_"), "pct", {"content": "metacharacter labels"}),
]

SEQUENCE: list[Step] = [
    *[put(ns, key, value) for ns, key, value in DOCS],
    get(("test", "foo"), "doc1"), get(("test", "foo"), "missing"), get(("test", "bar"), "doc1"),
    put(("test", "foo"), "doc1", {"content": "the quick brown fox jumps", "n": 1, "meta": {"kind": "fact"}}),
    get(("test", "foo"), "doc1"),
    put(("test", "foo"), 7, {"content": "an integer key", "n": 0}), get(("test", "foo"), "7"),
    search(("test",)), search(("test", "foo")), search(("test", "bar")), search((), limit=100),
    search(("foo",)), search(("foobar",)), search(("fo",)), search(("*",)), search(("%",)), search(("users",)),
    search(("users", "alice")), search(("users", "alice\n")), search(("Users",)), search(("users", "Alice")),
    search(("test",), filter={"n": 2}), search(("test",), filter={"n": {"$gt": 1}}),
    search(("test",), filter={"n": {"$gte": 2, "$lt": 4}}), search(("test",), filter={"n": {"$lte": 1}}),
    search(("test",), filter={"n": {"$ne": 2}}), search(("test",), filter={"n": {"$eq": 3}}),
    search(("test",), filter={"meta": {"kind": "fact"}}), search(("test",), filter={"meta": {"tags": ["a", "b"]}}),
    search(("test",), filter={"meta": {"tags": ["b", "a"]}}), search(("test",), filter={"missing": None}),
    search(("test",), filter={"flag": True}), search(("test",), filter={"meta": {"kind": "fact"}}),
    search(("test",), filter={"n": 2, "meta": {"kind": "fact"}}), search(("test",), filter={"n": {"$in": [1]}}),
    search(("test",), how="size", limit=2), search(("test",), how="size", limit=2, offset=2),
    search(("test",), how="size", limit=2, offset=4), search(("test",), limit=0),
    search(("test",), query="fox", limit=50), search(("test",), query="fox", filter={"n": {"$gte": 2}}, limit=50),
    search(("test",), query="fox", how="size", limit=2), search(("nobody",), query="fox"),
    search(("test",), query="", limit=50),
    ls(), ls(prefix=("test",)), ls(prefix=("a", "*", "c")), ls(suffix=("c",)), ls(suffix=("*", "c")),
    ls(prefix=("a",), suffix=("d",)), ls(max_depth=1), ls(max_depth=2, prefix=("a",)),
    ls(limit=3), ls(limit=3, offset=3),
    ls(prefix=("users", "alice")), ls(suffix=("lice",)), ls(prefix=("nobody",)),
    batch([ListNamespacesOp(match_conditions=None, max_depth=None, limit=100, offset=0),
           PutOp(("batch",), "k1", {"content": "one"}), GetOp(("batch",), "k1"), SearchOp(("batch",))]),
    get(("batch",), "k1"),
    batch([PutOp(("batch",), "k2", {"content": "first"}), PutOp(("batch",), "k2", {"content": "last wins"}),
           PutOp(("batch",), "k1", None), GetOp(("batch",), "k1")]),
    get(("batch",), "k1"), get(("batch",), "k2"),
    Step("delete", (("test", "foo"), "doc2")), get(("test", "foo"), "doc2"), search(("test",)),
    Step("delete", (("test", "foo"), "never-there")),
    put(("test", "foo"), "doc1", None), get(("test", "foo"), "doc1"),
    # errors LangGraph raises, and what it accepts
    put((), "k", {"content": "x"}), put(("a.b",), "k", {"content": "x"}), put(("a", ""), "k", {"content": "x"}),
    put(("langgraph", "x"), "k", {"content": "x"}), put(("x", "langgraph"), "k", {"content": "ok"}),
    get(("x", "langgraph"), "k"), put(("x", 1), "k", {"content": "x"}), put(("nul\x00",), "k", {"content": "x"}),
    put(("ok",), "k", "not a dict"), put(("ok",), "k", {"content": "y"}, ttl=None),
    get(("ok",), "k"), get(("a.b",), "k"), search(("a.b",)), search(("",)), Step("delete", (("a.b",), "k")),
    ls(prefix=("a.b",)), ls(suffix=("",)),
]


def _normal(value: Any) -> Any:
    """An item as (namespace, key, value): timestamps and scores are each store's own."""
    if isinstance(value, Item):
        return (tuple(value.namespace), value.key, value.value)
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


def _outcome(step: Step, call: Callable[[], Any]) -> Any:
    try:
        result = _normal(call())
    except Exception as exc:  # noqa: BLE001 - compared by class
        return ("error", next(c.__name__ for c in ERRORS if isinstance(exc, c)))
    if step.how == "set":
        return sorted(result, key=repr)
    if step.how == "size":
        return len(result)
    return result


def _run(store: BaseStore, asynchronous: bool) -> list[Any]:
    async def arun() -> list[Any]:
        out = []
        for step in SEQUENCE:
            method = getattr(store, "a" + step.method)
            result = None
            try:
                result = await method(*step.args, **step.kwargs)
            except Exception as exc:  # noqa: BLE001 - compared by class
                out.append(("error", next(c.__name__ for c in ERRORS if isinstance(exc, c))))
                continue
            out.append(_outcome(step, lambda r=result: r))
        return out

    if asynchronous:
        return asyncio.run(arun())
    return [_outcome(step, lambda s=step: getattr(store, s.method)(*s.args, **s.kwargs)) for step in SEQUENCE]


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_the_same_calls_give_the_same_results(store_factory: Any, asynchronous: bool) -> None:
    ours = FusedMemoryStore(store_factory())
    theirs = _run(InMemoryStore(), asynchronous)
    got = _run(ours, asynchronous)
    differ = [(i, SEQUENCE[i], t, g) for i, (t, g) in enumerate(zip(theirs, got, strict=True)) if t != g]
    assert not differ, "\n".join(f"step {i} {s.method}{s.args} {s.kwargs}:\n  InMemoryStore {t}\n  ours          {g}"
                                 for i, s, t, g in differ)


def test_the_sequence_covers_what_it_says(store_factory: Any) -> None:
    """The comparison is not vacuous: LangGraph raised each kind of error, items were found, pages
    were cut and filters kept some items and not others."""
    theirs = _run(InMemoryStore(), asynchronous=False)
    errors = {o[1] for o in theirs if isinstance(o, tuple) and o[:1] == ("error",)}
    assert errors == {"InvalidNamespaceError", "ValueError"}  # a ttl is taken here (InMemoryStore refuses it)
    searches = [o for s, o in zip(SEQUENCE, theirs, strict=True) if s.method == "search" and isinstance(o, list)]
    assert sum(1 for o in searches if o) >= 15 and sum(1 for o in searches if not o) >= 5
    assert [o for s, o in zip(SEQUENCE, theirs, strict=True) if s.how == "size"] == [2, 2, 1, 2]
