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

* `index` is LangGraph's index config (`langgraph_config`): `embed` becomes the `MemoryStore`'s
  embedder, `dims` is checked against it, `fields` chooses the text. A put's `index=[paths]` chooses
  its text; `index=False` stores the item unembedded, out of the lexical index and the graph, so no
  query ranks it (it is listed, got, and follows the ranked items unscored, as in LangGraph's stores).
* TTL as `BaseStore` defines it: a put's `ttl` (minutes; the `ttl` config's `default_ttl` when the
  put gives none) sets the memory's `expires_at`, which the vector engine filters on every read, so
  an expired item is gone for `get`, `search` and listing at once; `sweep_ttl()` (or the sweeper
  thread, `start_ttl_sweeper()`) deletes it. A get or search with `refresh_ttl=True` pushes the
  expiry of what it returned back by the item's own TTL, whatever the config (as PostgresStore
  does). Left out, `refresh_ttl` is the config's `refresh_on_read` (False when the config leaves it
  out, as SqliteStore reads it), and True on a store built without a `ttl` config (as `BaseStore`
  and PostgresStore have it).
* Namespaces may be given as tuples, lists or any other sequence of strings, as LangGraph accepts.

What it does not do
-------------------
* Values must be JSON (LangGraph's SQL stores require it too; `InMemoryStore` keeps any object),
  and keys non-empty (an empty key would let fused-memory derive the id from the text).
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
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

from fused_memory import EnsembleMemory, FusedHit, Memory, MemoryStore
from fused_memory.adapters import answered, resolve_ensemble, writable_store

from .langgraph_config import IndexSettings, TTLSettings, check_dims, index_settings, ttl_settings, use_embedder
from .langgraph_items import (
    check_filter,
    check_labels,
    is_indexed,
    item_memory,
    item_ttl,
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
#: The TTLs of the items the running batch's reads returned, by (namespace, key): what a refresh pushes back.
_READ_TTLS: contextvars.ContextVar[dict[tuple[str, str], float] | None] = contextvars.ContextVar(
    "fused_memory_langgraph_read_ttls", default=None)


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


def _as_tuple(labels: object) -> object:
    """A namespace given as a list (or another sequence of strings) as the tuple LangGraph means;
    a string or anything else is left for `check_labels` to refuse."""
    if isinstance(labels, Sequence) and not isinstance(labels, (str, bytes, tuple)):
        return tuple(labels)
    return labels


def _checked_namespaces(op: Op) -> Op:
    """The op with its namespace as a tuple, its labels checked as LangGraph's `validate_op_namespace`
    checks them (ops given to `batch` directly skip `BaseStore`'s checks), and as a fused-memory
    namespace can hold them."""
    if isinstance(op, (GetOp, PutOp)):
        return op._replace(namespace=check_labels(_as_tuple(op.namespace)))
    if isinstance(op, SearchOp):
        return op._replace(namespace_prefix=check_labels(_as_tuple(op.namespace_prefix), "namespace_prefix"))
    if isinstance(op, ListNamespacesOp):
        for condition in op.match_conditions or ():
            check_labels(tuple(condition.path), f"{condition.match_type}")
    return op


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
    `EnsembleMemory` (for a tuned `FusionConfig`). `index` is LangGraph's index config and `ttl` its
    `TTLConfig` (`langgraph_config`). Constructing does no I/O."""

    supports_ttl: bool = True

    def __init__(self, store: MemoryStore | EnsembleMemory | None = None, *, ensemble: EnsembleMemory | None = None,
                 index: Mapping[str, Any] | None = None, ttl: Mapping[str, Any] | None = None) -> None:
        source, self.ensemble = resolve_ensemble(store, ensemble)
        self.store = writable_store(source, "FusedMemoryStore")
        self._index: IndexSettings = index_settings(index)
        self._ttl: TTLSettings | None = ttl_settings(ttl)
        use_embedder(self.store, self._index)
        self.fields = self._index.fields
        self.index_config = dict(index) if index is not None else None
        #: The LangChain `Embeddings` of the index config, as LangGraph's stores expose it (None without `embed`).
        self.embeddings = getattr(self._index.embedder, "model", None) if self._index.embedder is not None else None
        # `BaseStore` turns a read's missing `refresh_ttl` into this config's `refresh_on_read`, True
        # when the key is missing; a config that leaves it out is read as SqliteStore reads it (reads
        # that do not ask refresh nothing), so the key is filled in. Without a config, reads refresh.
        self.ttl_config = ({**ttl, "refresh_on_read": ttl.get("refresh_on_read", False)}  # type: ignore[assignment]
                           if ttl is not None else None)
        self._dims_checked = self._index.dims is None
        self._sweeper: threading.Thread | None = None
        self._sweeper_stop = threading.Event()

    # ------------------------------------------------------------------ batch
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the ops in order (reads see the store before this batch's writes), then the writes."""
        ops = [_checked_namespaces(op) if isinstance(op, (GetOp, PutOp, SearchOp, ListNamespacesOp)) else op
               for op in ops]
        self.store.ensure_open()  # opened before the TTL clock starts: a TTL counts from the write, not the open
        writes = self._checked(ops)
        if not self._dims_checked:
            check_dims(self.store, self._index)
            self._dims_checked = True
        ttls: dict[tuple[str, str], float] = {}
        token = _READ_TTLS.set(ttls)
        try:
            results: list[Result] = [self._read(op) for op in ops]
        finally:
            _READ_TTLS.reset(token)
        self._refresh(ops, results, ttls)
        writes.apply(self.store)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """`batch` off the event loop: embedding, the arms and the engines are blocking work."""
        return await asyncio.to_thread(self.batch, list(ops))

    def _checked(self, ops: Sequence[Op]) -> _Writes:
        """Check every op before anything runs; build the memories the puts store."""
        writes = _Writes()
        now = datetime.now(timezone.utc)
        for op in ops:
            if not isinstance(op, (GetOp, SearchOp, PutOp, ListNamespacesOp)):
                raise ValueError(f"unknown operation {type(op).__name__}: give GetOp, SearchOp, PutOp or "
                                 "ListNamespacesOp")
            if isinstance(op, PutOp):
                namespace = namespace_key(op.namespace)
                memory = None if op.value is None else item_memory(namespace, op.key, op.value, op.index, self.fields,
                                                                   ttl=op.ttl, now=now)
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

    def _refresh(self, ops: Sequence[Op], results: Sequence[Result], ttls: Mapping[tuple[str, str], float]) -> None:
        """Push back the expiry of what a get or search with `refresh_ttl` returned, by each item's
        own TTL. The op's flag alone decides, as PostgresStore reads it (`BaseStore` filled it from
        `ttl_config` when the caller left it out), so an explicit `refresh_ttl=True` refreshes
        whatever the config says, and an item put with `ttl=` on a store built without a config is
        refreshed by its reads."""
        due: dict[tuple[str, float], set[str]] = {}
        for op, result in zip(ops, results, strict=True):
            if not isinstance(op, (GetOp, SearchOp)) or not op.refresh_ttl or not result:
                continue
            for item in (result if isinstance(result, list) else [result]):
                if not isinstance(item, Item):
                    continue
                namespace = namespace_key(item.namespace)
                minutes = ttls.get((namespace, item.key))
                if minutes is not None:
                    due.setdefault((namespace, minutes), set()).add(item.key)
        now = datetime.now(timezone.utc)
        for (namespace, minutes), keys in due.items():
            self.store.set_expiry(namespace, sorted(keys), now + timedelta(minutes=minutes))

    # ------------------------------------------------------------------ TTL
    def sweep_ttl(self) -> int:
        """Delete every item whose TTL has passed (reads stopped seeing it then); returns how many."""
        return self.store.sweep_expired()

    async def asweep_ttl(self) -> int:
        return await asyncio.to_thread(self.sweep_ttl)

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> threading.Thread:
        """Sweep every `sweep_interval_minutes` (the `ttl` config's, else 5) in a daemon thread, as
        LangGraph's SQL stores do; `stop_ttl_sweeper` ends it. A second call returns the running one."""
        if self._sweeper is not None and self._sweeper.is_alive():
            return self._sweeper
        minutes = sweep_interval_minutes or (self._ttl.sweep_interval_minutes if self._ttl else None) or 5.0
        self._sweeper_stop.clear()

        def run() -> None:
            while not self._sweeper_stop.wait(minutes * 60):
                try:
                    self.sweep_ttl()
                except Exception:  # a closed store, a backend hiccup: the next interval retries
                    if self._sweeper_stop.is_set():
                        return
        self._sweeper = threading.Thread(target=run, name="fused-memory-ttl-sweeper", daemon=True)
        self._sweeper.start()
        return self._sweeper

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper; True when it has ended (or none was running)."""
        self._sweeper_stop.set()
        if self._sweeper is None:
            return True
        self._sweeper.join(timeout)
        ended = not self._sweeper.is_alive()
        if ended:
            self._sweeper = None
        return ended

    async def astart_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> threading.Thread:
        return self.start_ttl_sweeper(sweep_interval_minutes)

    async def astop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        return await asyncio.to_thread(self.stop_ttl_sweeper, timeout)

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
        if len(items) < want:  # the rest of what matches, newest first: under a query an indexed item no
            # arm scored above 0 scores 0.0 (LangGraph's stores score every indexed item), an unindexed one None
            seen = {(h.memory.namespace, h.memory.id) for *_, h in ranked}
            page = None if op.filter else want + len(seen)  # a filter reads every value; else the newest do
            rest = [m for name, _ in spaces for m in self.store.memories(name, limit=page)
                    if (m.namespace, m.id) not in seen and (not op.filter or matches(item_value(m), op.filter))]
            rest = sorted(_newest_first(rest), key=lambda m: not (op.query and is_indexed(m)))  # scored first
            items += [_as_search_item(m, labels_of[m.namespace], 0.0 if op.query and is_indexed(m) else None)
                      for m in rest[:want - len(items)]]
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
    return _with_ttl(Item(value=item_value(memory), key=memory.id, namespace=tuple(labels), created_at=at,
                          updated_at=at), memory)


def _as_search_item(memory: Memory, labels: tuple[str, ...], score: float | None,
                    superseded_by: str | None = None) -> SearchItem:
    """A search result; its value carries `superseded_by` (the key of the newer version of its fact
    that this search also found, `ensemble.versions`) so an agent can tell a stale memory from a
    current one. A value that holds its own `superseded_by` keeps it."""
    at = stored_at(memory)
    value = item_value(memory)
    if superseded_by is not None:
        value.setdefault("superseded_by", superseded_by)
    return _with_ttl(SearchItem(tuple(labels), memory.id, value, at, at, score), memory)


def _with_ttl(item: Any, memory: Memory) -> Any:
    """Note an item's TTL (minutes), for a read's refresh (LangGraph's `Item` has no field for it)."""
    ttls = _READ_TTLS.get()
    if ttls is not None:
        minutes = item_ttl(memory)
        if minutes is not None:
            ttls[(memory.namespace, memory.id)] = minutes
    return item

