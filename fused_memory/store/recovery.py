"""Keeping the indexes consistent when a write fails or the process dies (the guarantees are listed in
`memory_store`): the checks `open` makes before touching a backend, the rebuild of BM25 and the
reconcile of the embedded graph from the vector payloads, and the rollback of a failed `add`."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..backends.codec import LAYOUT_VERSION, from_payload, payload_mentions
from ..backends.protocols import LexicalDoc, PayloadWriter, RebuiltOnOpen, Reconcilable, VectorBackend, VectorRecord
from ..errors import ConfigurationError, EmbeddingMismatch
from ..types import EntityMention, Memory
from .ingest import answer_tags, lexical_doc

if TYPE_CHECKING:
    from .memory_store import MemoryStore

__all__ = ["check_meta", "open_backends", "rebuild", "backfill", "snapshot", "undo", "merged_sessions"]

_log = logging.getLogger("fused_memory.store.memory_store")


def check_meta(meta: dict[str, Any], want: dict[str, Any], where: object) -> None:
    """Refuse a store this version cannot read, or one pinned to another embedder, before any
    backend is opened (opening may rewrite engine state)."""
    layout = meta.get("layout")
    if layout != LAYOUT_VERSION:
        if isinstance(layout, int) and not isinstance(layout, bool) and layout > LAYOUT_VERSION:
            hint = "it was written by a newer fused-memory: upgrade fused-memory to open it"
        elif isinstance(layout, int) and not isinstance(layout, bool):
            hint = ("it was written by an older fused-memory and there is no in-place migration: open it "
                    "with the version that wrote it, or re-ingest your memories into a new store path "
                    "(e.g. `fused-memory ingest`)")
        else:
            hint = "its meta.json has no valid \"layout\"; it is damaged or not a fused-memory store"
        raise ConfigurationError(f"the store at {where} has on-disk layout {layout!r}, but this fused-memory "
                                 f"reads layout {LAYOUT_VERSION}: {hint}. Nothing was changed.")
    if meta.get("embedder") != want:
        raise EmbeddingMismatch(
            f"store at {where} was written with embedder {meta.get('embedder')}, but {want} is in use; "
            "open it with the same embedder or re-ingest into a new store")


def open_backends(store: MemoryStore, want: dict[str, Any]) -> dict[str, Any]:
    """`MemoryStore.open`'s work, under its lock: check the meta against the embedder pin `want`,
    open the backends, write the meta of a new store, rebuild BM25 and reconcile the graph. A
    store that is refused is left untouched and closed. Returns the meta in force."""
    meta = store.vectors.read_meta()
    where = store.config.path or store.vectors
    if meta is not None:
        check_meta(meta, want, where)
    store.vectors.open(int(want["dim"]))
    try:
        if meta is None:
            if next(iter(store.vectors.scroll()), None) is not None:
                raise ConfigurationError(
                    f"the store at {where} holds memories but its meta (layout, embedder pin) is "
                    "missing; restore meta.json from a backup or re-ingest into a new store")
            meta = {"layout": LAYOUT_VERSION, "embedder": want, "sessions": {}}
            store.vectors.write_meta(meta)
        if store.graph is not None:
            store.graph.open()
        rebuild(store)
    except BaseException:
        for closer in ((store.graph.close,) if store.graph is not None else ()) + (store.vectors.close,):
            with contextlib.suppress(Exception):  # the original error is the one to report
                closer()
        raise
    return dict(meta)


def rebuild(store: MemoryStore) -> None:
    """BM25 from the payloads; a graph that can reconcile (the embedded one) made to agree with
    them: it repairs a crash between the vector write and the graph write, or a rollback that
    could not reach the graph, and fills an in-memory graph after a restart."""
    rebuilt = isinstance(store.lexical, RebuiltOnOpen)
    if rebuilt:
        store.lexical.clear()
    docs: list[LexicalDoc] = []
    want: dict[str, dict[str, tuple[list[EntityMention], Any]]] = {}
    untagged: dict[tuple[str, tuple[str, ...]], list[str]] = {}  # (namespace, tags) -> ids
    for p in store.vectors.scroll():
        m = from_payload(p)
        if rebuilt:
            docs.append(lexical_doc(m))
        want.setdefault(m.namespace, {})[m.id] = (payload_mentions(p), m.type)
        if "answers" not in p:
            untagged.setdefault((m.namespace, tuple(answer_tags(m.text))), []).append(m.id)
    if docs:
        store.lexical.add(docs)
    if untagged:
        backfill(store.vectors, untagged)
    if isinstance(store.graph, Reconcilable):
        relinked, unlinked = store.graph.reconcile(want)
        if relinked or unlinked:  # an in-memory graph is rebuilt on every open: not news
            level = logging.WARNING if store.graph.persistent else logging.INFO
            _log.log(level, "graph reconciled with the vector payloads on open: %d memories re-linked, "
                     "%d unlinked (an earlier write was interrupted)", relinked, unlinked)


def backfill(vectors: VectorBackend, untagged: dict[tuple[str, tuple[str, ...]], list[str]]) -> None:
    """Tag memories written before the payload had `answers` (2026-11-22): without the tag the
    temporal arm's "when did...?" search, which filters on it, cannot see them. The tag is derived
    from the stored text by ingest's own `ingest.answer_tags`, so nothing is re-embedded. One write per
    (namespace, tag) group. A backend that cannot update payloads, or a write that fails (a memory
    deleted meanwhile by another process fails its group), leaves those memories as they were
    (served as before), with a warning; the other groups are still written, and the next open
    tries again."""
    n = sum(len(ids) for ids in untagged.values())
    if not isinstance(vectors, PayloadWriter):
        _log.warning("%d memories have no `answers` tag and %s cannot update payloads: \"when did...?\" "
                     "questions will not find them until they are re-ingested", n, type(vectors).__name__)
        return
    failed: list[str] = []
    for (namespace, answers), ids in untagged.items():
        try:
            vectors.set_payload(namespace, ids, {"answers": list(answers)})
        except Exception as exc:  # noqa: BLE001 - any backend's failure: the store still opens
            failed.append(f"{len(ids)} in {namespace!r}: {type(exc).__name__}: {exc}")
    if failed:
        _log.warning("could not add the `answers` tag to some of %d older memories (%s); \"when did...?\" "
                     "questions will miss those until an open succeeds", n, "; ".join(failed))
    else:
        _log.info("added the `answers` tag to %d memories written by an older fused-memory", n)


def snapshot(vectors: VectorBackend, batch: list[Memory]) -> dict[tuple[str, str], Any]:
    """The stored payloads of the batch's ids that already exist (what a rollback restores)."""
    ids: dict[str, list[str]] = {}
    for m in batch:
        ids.setdefault(m.namespace, []).append(m.id)
    return {(ns, str(p["memory_id"])): p for ns, mids in ids.items() for p in vectors.get(ns, mids)}


def undo(store: MemoryStore, batch: list[Memory], before: dict[tuple[str, str], Any],
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
                attempt("vectors", store.vectors.upsert, [VectorRecord(m.id, ns, tuple(v.tolist()), dict(p))
                                                         for m, v, p in zip(old, vecs, old_payloads, strict=True)])
            attempt("lexical", store.lexical.add, [lexical_doc(m) for m in old])
            if store.graph is not None:
                attempt("graph", store.graph.link, ns, [(m.id, payload_mentions(p), m.type)
                                                       for m, p in zip(old, old_payloads, strict=True)])
    if problems:
        note = "rollback incomplete (repaired on the next open for the embedded graph): " + "; ".join(problems)
        _log.error("add failed (%s) and %s", exc, note)
        if hasattr(exc, "add_note"):
            exc.add_note(note)


def merged_sessions(*copies: Mapping[str, Any] | None) -> dict[str, float]:
    """The latest session end of every namespace over several copies of the meta's `sessions`
    (what the backend holds now, what this process read at open, the end being recorded): a store
    sharing a Qdrant server with other processes must not write back a copy that has lost their
    session ends. No default of 0.0: a first end before 1970 is kept as given."""
    out: dict[str, float] = {}
    for copy in copies:
        for namespace, ts in (copy or {}).items():
            out[namespace] = max(out.get(namespace, float(ts)), float(ts))
    return out
