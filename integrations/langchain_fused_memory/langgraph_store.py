"""`FusedMemoryStore`: a LangGraph `BaseStore` over a fused-memory `MemoryStore`.

    from langchain_fused_memory import FusedMemoryStore
    store = FusedMemoryStore(MemoryStore.embedded("./memory"))
    agent = create_agent(model, tools, store=store)      # or graph.compile(store=store)

Every `BaseStore` method and its async twin go through `batch` / `abatch`, as LangGraph's own
stores do. How namespaces, values and filters map is in `langgraph_items`; in short, `("memories",
"u1")` is the namespace "memories.u1", a value is kept whole and its text (`value["content"]` by
default) is what the arms index.

What the operations do
----------------------
* `put` / `delete` are `MemoryStore.add` / `delete` (upserts keyed by the item's key; a put
  replaces the item, and `created_at` = `updated_at` = the time of the last put, as in
  `InMemoryStore`). A batch is checked whole before anything is written: one bad put writes none.
  As in LangGraph's stores, a batch's reads run before its writes, and the last put of a key wins.
* `search(prefix, query=...)` is answered by the fused ensemble (all five arms, fused by RRF), one
  call per namespace under the prefix, merged by rank: namespaces are separate tenants for every
  arm (BM25 statistics, the entity graph), so each is searched as its own, and each gets its own
  plan (a query may take a shortcut in one namespace and the full plan in another) and its own
  reranked order, so fused scores do not compare across them: every namespace's first hit comes
  before any second one, higher score first among equals. `SearchItem.score` is the fused score.
  Items the ensemble did not rank (none of the arms found them, or they were put with
  `index=False`) follow the ranked ones with `score=None`, newest first, as LangGraph's stores
  append unembedded items: a search returns `limit` items whenever the prefix holds that
  many. With a `filter`, each namespace is asked for four times `offset + limit` hits before the
  filter is applied.
* `search(prefix)` without a query lists newest first (`updated_at` descending, ties by namespace
  and key), the order of LangGraph's SQL stores; `InMemoryStore` lists in insertion order.
* `list_namespaces` lists the namespaces that hold at least one memory, sorted, as LangGraph does.

What it does not do
-------------------
* TTL: `supports_ttl` is False. A put with a `ttl` raises `NotImplementedError` (LangGraph's own
  message, from `BaseStore.put`, or ours for a `PutOp` given to `batch`); `refresh_ttl` has nothing
  to refresh. Delete what should expire.
* `index`: the `MemoryStore`'s embedder embeds, so the store's `index` config takes only `fields`
  (which value paths are the text); `dims` and `embed` are refused. A put's `index=[paths]` chooses
  its text, `index=False` keeps it out of the ranking (see above).
* Values must be JSON (LangGraph's SQL stores require it too; `InMemoryStore` keeps any object),
  and keys non-empty (an empty key would let fused-memory derive the id from the text).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from fused_memory import ConfigurationError, EnsembleMemory, FusedHit, Memory, MemoryStore
from fused_memory.adapters import answered, resolve_ensemble, writable_store

from .langgraph_items import (
    check_filter,
    check_labels,
    index_fields,
    is_indexed,
    item_memory,
    item_value,
    matches,
    namespace_key,
    namespace_labels,
    namespace_matches,
    stored_at,
)

__all__ = ["FusedMemoryStore"]

#: With a filter, how many more hits than `offset + limit` each namespace is asked for: the filter
#: drops some of the hits, and what the ensemble did not rank follows unscored.
FILTER_DEPTH = 4
_MAX_K = 10_000  # EnsembleMemory's own bound on k


@dataclass
class _Writes:
    """A batch's writes, checked: the memories to add and the ids to delete, per (namespace, key),
    the last op for a key winning."""

    ops: dict[tuple[str, str], Memory | None] = field(default_factory=dict)

    def apply(self, store: MemoryStore) -> None:
        memories = [m for m in self.ops.values() if m is not None]
        if memories:
            store.add(memories)
        gone: dict[str, list[str]] = {}
        for (namespace, key), memory in self.ops.items():
            if memory is None:
                gone.setdefault(namespace, []).append(key)
        for namespace, keys in gone.items():
            store.delete(namespace, keys)


def _check_namespaces(op: Op) -> None:
    """The labels of every op, as LangGraph's `validate_op_namespace` checks them (ops given to
    `batch` directly skip `BaseStore`'s checks), and as a fused-memory namespace can hold them."""
    if isinstance(op, (GetOp, PutOp)):
        check_labels(op.namespace)
    elif isinstance(op, SearchOp):
        check_labels(op.namespace_prefix, "namespace_prefix")
    elif isinstance(op, ListNamespacesOp):
        for condition in op.match_conditions or ():
            check_labels(tuple(condition.path), f"{condition.match_type}")


def _count(value: object, what: str, low: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ValueError(f"{what} must be an integer >= {low}, got {value!r}")
    return value


def _newest_first(memories: list[Memory]) -> list[Memory]:
    memories.sort(key=lambda m: (m.namespace, m.id))
    memories.sort(key=stored_at, reverse=True)
    return memories


class FusedMemoryStore(BaseStore):
    """A LangGraph `BaseStore` whose items are fused-memory memories (see the module docstring).

    Give a `MemoryStore` (a default `EnsembleMemory` is built over it, optimizer on) or an
    `EnsembleMemory` (for a tuned `FusionConfig`). `index` is LangGraph's index config, of which
    only `fields` applies. Constructing does no I/O."""

    supports_ttl: bool = False

    def __init__(self, store: MemoryStore | EnsembleMemory | None = None, *, ensemble: EnsembleMemory | None = None,
                 index: Mapping[str, Any] | None = None) -> None:
        source, self.ensemble = resolve_ensemble(store, ensemble)
        self.store = writable_store(source, "FusedMemoryStore")
        if index is not None and not isinstance(index, Mapping):
            raise ConfigurationError(f"index must be a dict like {{'fields': ['content']}}, got {index!r}")
        unknown = sorted(set(index or {}) - {"fields"})
        if unknown:
            raise ConfigurationError(f"index takes only 'fields' here, not {unknown}: the MemoryStore's embedder "
                                     "embeds, so there is no 'dims' or 'embed' to choose")
        self.fields = index_fields((index or {}).get("fields"), "index['fields']")

    # ------------------------------------------------------------------ batch
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the ops in order (reads see the store before this batch's writes), then the writes."""
        ops = list(ops)
        writes = self._checked(ops)
        results: list[Result] = [self._read(op) for op in ops]
        writes.apply(self.store)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """`batch` off the event loop: embedding, the arms and the engines are blocking work."""
        return await asyncio.to_thread(self.batch, list(ops))

    def _checked(self, ops: Sequence[Op]) -> _Writes:
        """Check every op before anything runs; build the memories the puts store."""
        writes = _Writes()
        for op in ops:
            if not isinstance(op, (GetOp, SearchOp, PutOp, ListNamespacesOp)):
                raise ValueError(f"unknown operation {type(op).__name__}: give GetOp, SearchOp, PutOp or "
                                 "ListNamespacesOp")
            _check_namespaces(op)
            if isinstance(op, PutOp):
                if op.ttl is not None:
                    raise NotImplementedError(f"TTL is not supported by {type(self).__name__}. "
                                              "Use a store implementation that supports TTL or set ttl=None.")
                namespace = namespace_key(op.namespace)
                memory = None if op.value is None else item_memory(namespace, op.key, op.value, op.index, self.fields)
                writes.ops.pop((namespace, str(op.key)), None)
                writes.ops[(namespace, str(op.key))] = memory
            elif isinstance(op, GetOp) and op.namespace:
                namespace_key(op.namespace)
            elif isinstance(op, SearchOp):
                _count(op.limit, "limit", 0)
                _count(op.offset, "offset", 0)
                if op.filter is not None and not isinstance(op.filter, Mapping):
                    raise ValueError(f"filter must be a dict, got {type(op.filter).__name__}")
                check_filter(op.filter)
                if op.query is not None and not isinstance(op.query, str):
                    raise ValueError(f"query must be a string, got {type(op.query).__name__}")
            elif isinstance(op, ListNamespacesOp):
                _count(op.limit, "limit", 0)
                _count(op.offset, "offset", 0)
                if op.max_depth is not None:
                    _count(op.max_depth, "max_depth", 1)
        return writes

    def _read(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        return None

    # ------------------------------------------------------------------ reads
    def _get(self, op: GetOp) -> Item | None:
        if not op.namespace:
            return None
        found = self.store.get_many(namespace_key(op.namespace), [str(op.key)])
        return _as_item(found[0], op.namespace) if found else None

    def _namespaces(self, prefix: tuple[str, ...] = ()) -> list[tuple[str, tuple[str, ...]]]:
        """(namespace, labels) of every stored namespace under `prefix`, label by label."""
        out = []
        for name in self.store.namespaces():
            labels = namespace_labels(name)
            if labels is not None and labels[:len(prefix)] == prefix:
                out.append((name, labels))
        return out

    def _search(self, op: SearchOp) -> list[SearchItem]:
        spaces = self._namespaces(tuple(op.namespace_prefix))
        want = op.offset + op.limit
        if want == 0 or not spaces:
            return []
        # Namespaces are merged by rank, not by score: each is its own retrieval (its own plan, and
        # the reranker's order, which fused scores do not follow), so their scores do not compare.
        # Every namespace's first hit comes before any second one, best score first among equals.
        ranked: list[tuple[int, float, int, FusedHit]] = []
        if op.query:
            k = min(_MAX_K, want * (FILTER_DEPTH if op.filter else 1))
            for order, (name, _labels) in enumerate(spaces):
                hits = answered(self.ensemble.retrieve(op.query, namespace=name, k=k)).hits
                kept = [h for h in hits if is_indexed(h.memory) and matches(item_value(h.memory), op.filter)]
                ranked.extend((place, -h.score, order, h) for place, h in enumerate(kept))
            ranked.sort(key=lambda t: t[:3])
        labels_of = dict(spaces)
        items = [_as_search_item(h.memory, labels_of[h.memory.namespace], h.score, h.superseded_by)
                 for *_, h in ranked[:want]]
        if len(items) < want:  # the rest of what matches, unscored, newest first
            seen = {(h.memory.namespace, h.memory.id) for *_, h in ranked}
            page = None if op.filter else want + len(seen)  # a filter reads every value; else the newest do
            rest = [m for name, _ in spaces for m in self.store.memories(name, limit=page)
                    if (m.namespace, m.id) not in seen and (not op.filter or matches(item_value(m), op.filter))]
            items += [_as_search_item(m, labels_of[m.namespace], None) for m in _newest_first(rest)[:want - len(items)]]
        return items[op.offset:want]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        found = [labels for _, labels in self._namespaces() if namespace_matches(labels, op.match_conditions or ())]
        if op.max_depth is not None:
            found = list({labels[:op.max_depth]: None for labels in found})
        return sorted(found)[op.offset:op.offset + op.limit]

    def __repr__(self) -> str:
        return f"FusedMemoryStore({self.store!r})"


def _as_item(memory: Memory, labels: tuple[str, ...]) -> Item:
    at = stored_at(memory)
    return Item(value=item_value(memory), key=memory.id, namespace=tuple(labels), created_at=at, updated_at=at)


def _as_search_item(memory: Memory, labels: tuple[str, ...], score: float | None,
                    superseded_by: str | None = None) -> SearchItem:
    """A search result; its value carries `superseded_by` (the key of the newer version of its fact
    that this search also found, `ensemble.versions`) so an agent can tell a stale memory from a
    current one. A value that holds its own `superseded_by` keeps it."""
    at = stored_at(memory)
    value = item_value(memory)
    if superseded_by is not None:
        value.setdefault("superseded_by", superseded_by)
    return SearchItem(tuple(labels), memory.id, value, at, at, score)

