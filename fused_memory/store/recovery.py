"""Keeping the indexes consistent when a write fails or the process dies (the guarantees are listed in
`memory_store`): the checks `open` makes before touching a backend, what `open` repairs, and the
rollback of a failed `add`.

What `open` reads (docs/decisions/0041-lexical-index-kept-on-disk.md):

* an embedded store with a write journal (`journal`, the meta's layout `JOURNALED_LAYOUT`) and its
  lexical index on disk (`PersistedIndex`) or in the engine: no payload. The memories of writes the
  journal says were cut short are read back and made to agree in the lexical index and the graph
  (`repair`); a namespace whose postings file is damaged is rebuilt from its own payloads;
* the first open of a store written without the journal, or whose lexical index, journal or graph
  file is missing, and every open of a store whose lexical index lives only in the process
  (`RebuiltOnOpen`): every payload, to rebuild the lexical index and reconcile the embedded graph
  (`rebuild`). A store on a server with the lexical index in the engine and the engine or a Bolt
  graph reads none either: its open time does not depend on the corpus."""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ..backends.codec import LAYOUT_VERSION, from_payload, payload_mentions
from ..backends.graph.engine import EngineGraphStore
from ..backends.graph.engine_points import EngineHost
from ..backends.lexical.stored import StoredBM25Index
from ..backends.protocols import (
    GraphStore,
    LexicalDoc,
    PersistedIndex,
    RebuiltOnOpen,
    Reconcilable,
    VectorBackend,
    VectorRecord,
)
from ..errors import ConfigurationError, EmbeddingMismatch
from ..types import EntityMention, Memory
from .factory import LocalModeGraph, lexical_folder
from .ingest import answer_tags, lexical_doc
from .meta import merged_sessions, write_merged
from .parts import StoreParts
from .upgrade import (
    ANSWERS,
    GRAPH,
    SPARSE,
    TIMES,
    WORDING_UPGRADE,
    backfill,
    backfill_sparse,
    backfill_times,
    backfill_wording,
    pending,
    sparse_vectors,
    wanted,
)

__all__ = ["check_meta", "open_backends", "local_mode_graph", "rebuild", "repair", "JOURNALED_LAYOUT", "layout_of",
           "namespace_docs", "backfill", "snapshot", "undo",
           "merged_sessions"]  # `backfill` and `merged_sessions` live in `upgrade` and `meta` now, and are named
# here for callers that import them from here

_log = logging.getLogger("fused_memory.store.memory_store")
#: The meta's layout of a store whose write journal and lexical index files are kept in step with
#: its payloads (layout 1's payloads, unchanged). A version before it would write the payloads
#: without them, so it refuses the store; this one opens layout 1 and rebuilds once.
JOURNALED_LAYOUT = LAYOUT_VERSION + 1
#: Local-mode folders whose graph in the engine this process has said how to move (said once each).
_TOLD: set[str] = set()
_TOLD_LOCK = threading.Lock()


def local_mode_graph(graph: LocalModeGraph, vectors: VectorBackend) -> GraphStore:
    """The graph a local-mode store opens with: its SQLite graph in the folder, unless the folder
    holds none and an earlier version kept this store's graph in the engine (the sibling
    collection exists): then that one, as it is, and the process says once how to move it."""
    if graph.path is None or Path(graph.path).exists() or not isinstance(vectors, EngineHost):
        return graph
    engine = EngineGraphStore(vectors)
    if not engine.exists():
        return graph
    with _TOLD_LOCK:
        told = graph.path in _TOLD
        _TOLD.add(graph.path)
    if not told:
        _log.warning(
            "the graph of the store at %s is in the Qdrant engine (%r), where local mode answers a graph question "
            "in about 0.5 s at 2,000 memories; it opens as it is. To move it into the SQLite graph this store "
            "would default to (milliseconds), open the store once with graph_path=%r: the memories' links are "
            "rebuilt from their payloads on open; relations and aliases made with relate() / add_alias() are not "
            "carried over (make them again)", Path(graph.path).parent, engine.collection, graph.path)
    return engine


def layout_of(store: StoreParts) -> int:
    """The layout this store keeps: journaled when it has a journal and no lexical index that lives
    only in the process (whose files, if any, would go stale)."""
    in_process = isinstance(store.lexical, RebuiltOnOpen) and not isinstance(store.lexical, PersistedIndex)
    return JOURNALED_LAYOUT if store.journal is not None and not in_process else LAYOUT_VERSION


def check_meta(meta: dict[str, Any], want: dict[str, Any], where: object) -> None:
    """Refuse a store this version cannot read, or one pinned to another embedder, before any
    backend is opened (opening may rewrite engine state)."""
    layout = meta.get("layout")
    if layout not in (LAYOUT_VERSION, JOURNALED_LAYOUT) or isinstance(layout, bool):
        if isinstance(layout, int) and not isinstance(layout, bool) and layout > JOURNALED_LAYOUT:
            hint = "it was written by a newer fused-memory: upgrade fused-memory to open it"
        elif isinstance(layout, int) and not isinstance(layout, bool):
            hint = ("it was written by an older fused-memory and there is no in-place migration: open it "
                    "with the version that wrote it, or re-ingest your memories into a new store path "
                    "(e.g. `fused-memory ingest`)")
        else:
            hint = "its meta.json has no valid \"layout\"; it is damaged or not a fused-memory store"
        raise ConfigurationError(f"the store at {where} has on-disk layout {layout!r}, but this fused-memory "
                                 f"reads layouts {LAYOUT_VERSION} and {JOURNALED_LAYOUT}: {hint}. Nothing was changed.")
    if meta.get("embedder") != want:
        raise EmbeddingMismatch(
            f"store at {where} was written with embedder {meta.get('embedder')}, but {want} is in use; "
            "open it with the same embedder or re-ingest into a new store")


def open_backends(store: StoreParts, want: dict[str, Any]) -> dict[str, Any]:
    """`MemoryStore.open`'s work, under its lock: check the meta against the embedder pin `want`,
    open the backends, write the meta of a new store, rebuild BM25 and reconcile the graph. A
    store that is refused is left untouched and closed. Returns the meta in force."""
    meta = store.vectors.read_meta()
    where = store.config.path or store.vectors
    if meta is not None:
        check_meta(meta, want, where)
    store.vectors.open(int(want["dim"]))  # refused here when another process holds the store
    try:
        if isinstance(store.graph, LocalModeGraph):
            store.graph = local_mode_graph(store.graph, store.vectors)
        layout = layout_of(store)
        new = meta is None
        if meta is None:
            if next(iter(store.vectors.scroll()), None) is not None:
                raise ConfigurationError(
                    f"the store at {where} holds memories but its meta (layout, embedder pin) is "
                    "missing; restore meta.json from a backup or re-ingest into a new store")
            # every memory this version writes has what `upgrade` would add: nothing to check, ever
            meta = {"layout": layout, "embedder": want, "sessions": {},
                    "upgraded": wanted(store.vectors, store.graph)}
            store.vectors.write_meta(meta)
        elif meta.get("layout") == JOURNALED_LAYOUT and layout != JOURNALED_LAYOUT:
            # opened without its journal or with an in-process lexical index: the files will not be
            # kept in step, so the next journaled open must not trust them (it rebuilds once)
            meta = write_merged(store.vectors, {**meta, "layout": layout})
        if store.config.path and not isinstance(store.lexical, PersistedIndex):
            # opened with another lexical index (lexical="engine"): its writes will not reach the
            # BM25 files, so the next open that uses them rebuilds them instead of trusting them
            StoredBM25Index(lexical_folder(store.config.path)).invalidate(
                "the store was written with another lexical index since these files were")
        if store.journal is not None:
            store.journal.open()
        if store.graph is not None:
            store.graph.open()
        meta = _reopen(store, meta, where, new=new)
    except BaseException:
        closers = [store.graph.close] if store.graph is not None else []
        if isinstance(store.lexical, StoredBM25Index):
            # released, not merged: an open that failed must not rewrite postings on its way out
            closers.append(functools.partial(store.lexical.close, merge=False))
        elif isinstance(store.lexical, PersistedIndex):
            closers.append(store.lexical.close)
        if store.journal is not None:
            closers.append(store.journal.close)
        for closer in [*closers, store.vectors.close]:
            with contextlib.suppress(Exception):  # the original error is the one to report
                closer()
        raise
    return dict(meta)


def namespace_docs(vectors: VectorBackend, namespace: str) -> Iterator[LexicalDoc]:
    """The lexical documents of a namespace's memories, from their payloads (what `add` indexed)."""
    for p in vectors.scroll(namespace):
        m = from_payload(p)
        if m.indexed:
            yield lexical_doc(m)


def _reopen(store: StoreParts, meta: dict[str, Any], where: object, *, new: bool) -> dict[str, Any]:
    """Open without reading payloads when the files can be trusted (module docstring), else scan
    (quietly for a `new` store: it holds nothing to read)."""
    persisted = store.lexical if isinstance(store.lexical, PersistedIndex) else None
    state = persisted.load() if persisted is not None else None
    if persisted is not None:
        persisted.set_refill(lambda namespace: namespace_docs(store.vectors, namespace))
    why = _why_scan(store, meta, state)
    if why is None:
        assert state is not None or persisted is None
        for namespace, damaged in (state.namespaces.items() if state is not None else ()):
            _log.warning("rebuilding the lexical index of namespace %.80r of the store at %s from its memories: %s",
                         namespace, where, damaged)
            persisted.rebuild(namespace_docs(store.vectors, namespace), [namespace])  # type: ignore[union-attr]
        repair(store)
        return meta
    if why and not new:
        _log.warning("reading every memory of the store at %s on open: %s; later opens read none", where, why)
    return rebuild(store, meta)


def _why_scan(store: StoreParts, meta: dict[str, Any], state: Any) -> str | None:
    """Why this open must read every payload ("" when it always does, quietly), or None."""
    if store.journal is None or layout_of(store) != JOURNALED_LAYOUT:
        return ""  # an in-process lexical index, or a store without a journal: as it always was
    if state is not None and state.whole is not None:
        return f"its lexical index is rebuilt ({state.whole})"
    if meta.get("layout") != JOURNALED_LAYOUT:
        return "it was written by an earlier version (or without its write journal)"
    if store.journal.created:
        if store.journal.unreadable:
            return f"its write journal could not be read ({store.journal.unreadable})"
        return "its write journal was missing"
    graph = store.graph
    if isinstance(graph, Reconcilable) and (not graph.persistent or graph.created):
        return "its graph file was missing" if graph.persistent else ""
    return None


def repair(store: StoreParts) -> int:
    """Make the lexical index and the embedded graph agree with the payloads for the memories of
    the writes the journal says were cut short; returns how many memories were compared."""
    journal = store.journal
    if journal is None:
        return 0
    todo = journal.unfinished()
    if not todo:
        return 0
    want: dict[str, dict[str, tuple[list[EntityMention], Any]]] = {}
    for ns, ids in todo.items():
        payloads = {str(p["memory_id"]): p for p in store.vectors.get(ns, sorted(ids))}
        kept = {mid: from_payload(p) for mid, p in payloads.items()}
        kept = {mid: m for mid, m in kept.items() if m.indexed}  # as `add` indexes them
        store.lexical.add([lexical_doc(m) for m in kept.values()])
        gone = sorted(ids - set(kept))
        if gone:
            store.lexical.delete(ns, gone)
        want[ns] = {mid: (payload_mentions(payloads[mid]), m.type) for mid, m in kept.items()}
    relinked = unlinked = 0
    if isinstance(store.graph, Reconcilable):
        relinked, unlinked = store.graph.reconcile(want, only=todo)
    journal.clear()
    n = sum(len(ids) for ids in todo.values())
    _log.warning("repaired the indexes of %d memories whose write was cut short (graph: %d re-linked, %d unlinked)",
                 n, relinked, unlinked)
    return n


def rebuild(store: StoreParts, meta: dict[str, Any]) -> dict[str, Any]:
    """An in-process BM25 index from the payloads; a graph that can reconcile (the embedded one)
    made to agree with them: it repairs a crash between the vector write and the graph write, or a
    rollback that could not reach the graph, and fills an in-memory graph after a restart. When
    neither needs it, nothing is read (see the module docstring). A scan brings older memories up
    to date on its way (`upgrade`); returns the meta, with that recorded."""
    persisted = store.lexical if isinstance(store.lexical, PersistedIndex) else None
    rebuilt = store.lexical if isinstance(store.lexical, RebuiltOnOpen) and persisted is None else None
    if rebuilt is None and persisted is None and not isinstance(store.graph, Reconcilable):
        return meta  # older memories are brought up to date per namespace on first use (`upgrade`)
    todo = pending(store.vectors, meta) - {GRAPH}  # the engine graph is brought in per namespace (`upgrade`)
    if rebuilt is not None:
        rebuilt.clear()
    docs: list[LexicalDoc] = []
    want: dict[str, dict[str, tuple[list[EntityMention], Any]]] = {}
    untagged: dict[tuple[str, tuple[str, ...]], list[str]] = {}  # (namespace, tags) -> ids
    for p in store.vectors.scroll():
        m = from_payload(p)
        if (rebuilt is not None or persisted is not None) and m.indexed:  # as `add` indexes them
            docs.append(lexical_doc(m))
        want.setdefault(m.namespace, {})[m.id] = (payload_mentions(p), m.type)
        if "answers" not in p:
            untagged.setdefault((m.namespace, tuple(answer_tags(m.text))), []).append(m.id)
    if persisted is not None:
        persisted.rebuild(docs)
    elif docs:
        store.lexical.add(docs)
    done = not untagged or backfill(store.vectors, untagged)
    if TIMES in todo:
        done = _backfilled(want, lambda ns: backfill_times(store, ns),
                           "read the stated times and slots of %d memories written by an older fused-memory",
                           "read the stated times and slots of every older memory") and done
    if WORDING_UPGRADE in todo:
        done = _backfilled(want, lambda ns: backfill_wording(store, ns),
                           "kept the wording of %d memories written by an older fused-memory",
                           "keep the wording of every older memory") and done
    if SPARSE in todo:
        done = _backfilled(want, lambda ns: backfill_sparse(store.vectors, store.lexical, ns), None,
                           "give every older memory its sparse lexical vector") and done
    if todo and done:
        meta = write_merged(store.vectors, {**meta, "upgraded": [*meta.get("upgraded", ()), ANSWERS, *todo]})
    if isinstance(store.graph, Reconcilable):
        relinked, unlinked = store.graph.reconcile(want)
        if relinked or unlinked:  # an in-memory graph is rebuilt on every open: not news
            level = logging.WARNING if store.graph.persistent else logging.INFO
            _log.log(level, "graph reconciled with the vector payloads on open: %d memories re-linked, "
                     "%d unlinked (an earlier write was interrupted)", relinked, unlinked)
    if store.journal is not None:
        store.journal.clear()  # everything was just compared
    if layout_of(store) == JOURNALED_LAYOUT and meta.get("layout") != JOURNALED_LAYOUT:
        meta = write_merged(store.vectors, {**meta, "layout": JOURNALED_LAYOUT})  # last: the files agree now
    return meta


def snapshot(vectors: VectorBackend, batch: list[Memory]) -> dict[tuple[str, str], Any]:
    """The stored payloads of the batch's ids that already exist (what a rollback restores)."""
    ids: dict[str, list[str]] = {}
    for m in batch:
        ids.setdefault(m.namespace, []).append(m.id)
    return {(ns, str(p["memory_id"])): p for ns, mids in ids.items() for p in vectors.get(ns, mids)}


def undo(store: StoreParts, batch: list[Memory], before: dict[tuple[str, str], Any],
         exc: BaseException) -> None:
    """Roll a failed write back in every index: new memories removed, overwritten ones restored.
    Best effort per step; what could not be undone is logged and noted on `exc`, and the embedded
    graph is reconciled with the payloads on the next open anyway."""
    problems: list[str] = []

    def attempt(what: str, fn: Any, *args: Any) -> None:
        try:
            fn(*args)
        except Exception as err:  # noqa: BLE001 - keep undoing the other indexes
            problems.append(f"{what}: {type(err).__name__}: {err}")

    by_ns: dict[str, list[Memory]] = {}
    for m in batch:
        by_ns.setdefault(m.namespace, []).append(m)
    for ns, mems in by_ns.items():
        new = list(dict.fromkeys(m.id for m in mems if (ns, m.id) not in before))
        old_payloads = list({m.id: before[(ns, m.id)] for m in mems if (ns, m.id) in before}.values())
        if new:
            attempt("vectors", store.vectors.delete, ns, new)
            attempt("lexical", store.lexical.delete, ns, new)
            if store.graph is not None:
                attempt("graph", store.graph.unlink, ns, new)
        if old_payloads:
            old = [from_payload(p) for p in old_payloads]
            try:
                vecs = store.embed_memories(old)
            except Exception as err:  # noqa: BLE001
                problems.append(f"re-embedding the previous versions: {err}")
            else:
                sparse = sparse_vectors(store.vectors, store.lexical, old)
                attempt("vectors", store.vectors.upsert, [
                    VectorRecord(m.id, ns, tuple(v.tolist()), dict(p), s)
                    for m, v, p, s in zip(old, vecs, old_payloads, sparse, strict=True)])
            attempt("lexical", store.lexical.add, [lexical_doc(m) for m in old])
            if store.graph is not None:
                attempt("graph", store.graph.link, ns, [(m.id, payload_mentions(p), m.type)
                                                       for m, p in zip(old, old_payloads, strict=True)])
    if problems:
        note = "rollback incomplete (repaired on the next open for the embedded graph): " + "; ".join(problems)
        _log.error("add failed (%s) and %s", exc, note)
        if hasattr(exc, "add_note"):
            exc.add_note(note)


def _backfilled(namespaces: Iterable[str], fill: Callable[[str], int], did: str | None, what: str) -> bool:
    """One upgrade's backfill over `namespaces` on the open scan (`did` logs how many it wrote);
    False, with a warning, when it failed: the store still opens, and each namespace is retried when
    it is first searched (`upgrade.NamespaceUpgrades`)."""
    try:
        n = sum(fill(namespace) for namespace in namespaces)
    except Exception as exc:  # noqa: BLE001 - the store still opens; searches retry per namespace
        _log.warning("could not %s (%s: %s); each namespace is retried when it is first searched",
                     what, type(exc).__name__, exc)
        return False
    if n and did:
        _log.info(did, n)
    return True
