"""Bringing memories an older fused-memory wrote up to date, without scanning the store on open.

What such a memory may lack, each named as the store's meta lists it under "upgraded":

* `answers`: the payload tag "when did...?" questions filter on (`ingest.answer_tags`). Derived
  from the stored text: nothing is re-embedded.
* `bm25`: the sparse lexical vector (`backends.lexical.sparse`), when the collection got it after
  the memory was written (a store written with the in-process BM25 index, opened with the
  lexical index in the engine). Derived from the payload the same way.
* `graph`: the memory's link in the engine graph (`backends.graph.engine`), for a collection a
  connect() store wrote while its graph lived in the process. Derived from the payload's mentions
  (`codec.payload_mentions`), oldest memory first, so "most recently linked" keeps its meaning.

* `wording1` (`backends.wording.UPGRADE`, named after the entry's version): what the stage after
  fusion compares of its text (text key digest, content words, values, negations). Derived from the
  stored text: nothing is re-embedded. Until it is written, a memory's wording is read from its text
  at query time, the same answer more slowly; so it is written by `MemoryStore.upgrade()` and by an
  open that scans every payload anyway, never on a namespace's first search (one write per memory:
  seconds for a large namespace, and a store whose payloads cannot be written must still answer).

* `times`: the times its text states (`Memory.stated_times`) and its slots (`query.slots`, the
  payload's `slot_keys`), read by this version's rules: from the stored text, the time it was
  said, and one spaCy pass; nothing is re-embedded. A derived slot key an older version wrote is
  read again by these rules; a caller's predicate is kept as it is.

The meta's "upgraded" lists what *every* memory of the store has. A store created by this version
lists both (when it keeps sparse vectors), and nothing is ever checked. For an older store:

* when `open` scans every payload anyway (the embedded default rebuilds its BM25 index and
  reconciles its graph from them), the upgrades ride on that scan and are recorded in the meta;
* otherwise (a server, where `open` must not depend on the corpus), each namespace is brought up to
  date the first time this process searches it (its memories, once per process), and
  `MemoryStore.upgrade()` does every namespace once and records it, after which no process checks.

A backfill and another process's write can cross: the sparse vector is only set where it is still
missing (a memory rewritten meanwhile keeps its new one), and a memory deleted meanwhile is
skipped; an `answers` tag written over a rewrite from the text read before it is the one race left
(its window is the backfill of one page).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from ..backends.codec import STATED, from_payload, payload_mentions, to_payload
from ..backends.graph.engine import EngineGraphStore
from ..backends.lexical.engine import EngineLexicalIndex
from ..backends.lexical.sparse import SparseBM25
from ..backends.protocols import GraphStore, LexicalIndex, PayloadWriter, SparseSearch, SparseVector, VectorBackend
from ..backends.wording import UPGRADE as WORDING_UPGRADE
from ..backends.wording import WORDING, of_payload, read_text
from ..backends.wording import to_json as wording_json
from ..query.slots import SLOT_FIELD, SLOTS_FIELD
from ..query.temporal import stated_times
from ..types import Memory
from .ingest import answer_tags, lexical_doc, slot_keys, with_slot
from .meta import write_merged
from .parts import StoreParts

#: The sparse vector of a memory kept out of ranking (`Memory.indexed` False): no term finds it.
NO_TERMS = SparseVector((), ())

__all__ = ["NO_TERMS", "ANSWERS", "SPARSE", "GRAPH", "TIMES", "WORDING_UPGRADE", "wanted", "pending",
           "sparse_vectors", "backfill", "backfill_sparse", "backfill_graph", "backfill_times", "backfill_wording",
           "NamespaceUpgrades"]

_log = logging.getLogger("fused_memory.store.memory_store")

ANSWERS = "answers"
SPARSE = "bm25"
GRAPH = "graph"
TIMES = "times"
_PAGE = 256


def _sparse_on(vectors: VectorBackend) -> bool:
    return isinstance(vectors, SparseSearch) and vectors.sparse_enabled


def wanted(vectors: VectorBackend, graph: GraphStore | None = None) -> list[str]:
    """What every memory this version writes into `vectors` (and `graph`) has (known once open)."""
    return [ANSWERS, TIMES, WORDING_UPGRADE, *([SPARSE] if _sparse_on(vectors) else []),
            *([GRAPH] if isinstance(graph, EngineGraphStore) else [])]


def pending(vectors: VectorBackend, meta: Mapping[str, Any], graph: GraphStore | None = None) -> frozenset[str]:
    """What some memories of the store may still lack."""
    return frozenset(wanted(vectors, graph)) - set(meta.get("upgraded") or ())


def sparse_vectors(vectors: VectorBackend, lexical: LexicalIndex, memories: Sequence[Memory]
                   ) -> list[SparseVector | None]:
    """The sparse vector of each memory when the collection keeps them (whatever the lexical
    setting: a collection that has them must have them for every memory), else None each."""
    if not _sparse_on(vectors):
        return [None] * len(memories)
    encoder = lexical.encoder if isinstance(lexical, EngineLexicalIndex) else SparseBM25()
    return [encoder.encode(lexical_doc(m)) if m.indexed else NO_TERMS for m in memories]


def backfill(vectors: VectorBackend, untagged: dict[tuple[str, tuple[str, ...]], list[str]]) -> bool:
    """Tag memories written before the payload had `answers`: without the tag the temporal arm's
    "when did...?" search, which filters on it, cannot see them. One write per (namespace, tag)
    group. A backend that cannot update payloads, or a write that fails (a memory deleted meanwhile
    by another process fails its group), leaves those memories as they were (served as before),
    with a warning; the other groups are still written, and the next attempt tries again.
    True when every group was written."""
    n = sum(len(ids) for ids in untagged.values())
    if not isinstance(vectors, PayloadWriter):
        _log.warning("%d memories have no `answers` tag and %s cannot update payloads: \"when did...?\" "
                     "questions will not find them until they are re-ingested", n, type(vectors).__name__)
        return False
    failed: list[str] = []
    for (namespace, answers), ids in untagged.items():
        try:
            vectors.set_payload(namespace, ids, {"answers": list(answers)})
        except Exception as exc:  # noqa: BLE001 - any backend's failure: the store still opens
            failed.append(f"{len(ids)} in {namespace!r}: {type(exc).__name__}: {exc}")
    if failed:
        _log.warning("could not add the `answers` tag to some of %d older memories (%s); \"when did...?\" "
                     "questions will miss those until an upgrade succeeds", n, "; ".join(failed))
        return False
    _log.info("added the `answers` tag to %d memories written by an older fused-memory", n)
    return True


def backfill_sparse(vectors: VectorBackend, lexical: LexicalIndex, namespace: str) -> int:
    """Give the namespace's memories that lack it their sparse vector; returns how many."""
    if not isinstance(vectors, SparseSearch):
        return 0
    done = 0
    page: list[Memory] = []
    for p in vectors.missing_sparse(namespace):
        page.append(from_payload(p))
        if len(page) == _PAGE:
            done += _write_sparse(vectors, lexical, namespace, page)
            page = []
    return done + (_write_sparse(vectors, lexical, namespace, page) if page else 0)


def _write_sparse(vectors: SparseSearch, lexical: LexicalIndex, namespace: str, page: list[Memory]) -> int:
    encoded = sparse_vectors(vectors, lexical, page)  # type: ignore[arg-type]  # a VectorBackend too
    vectors.set_sparse(namespace, [(m.id, v) for m, v in zip(page, encoded, strict=True) if v is not None])
    return len(page)


def backfill_graph(vectors: VectorBackend, graph: EngineGraphStore, namespace: str) -> int:
    """Link the namespace's memories the engine graph does not hold yet, from their payloads,
    oldest first (a memory linked meanwhile by a worker of this version is left as it is);
    returns how many."""
    payloads = sorted(vectors.scroll(namespace), key=lambda p: (float(p.get("created_at") or 0.0),
                                                                str(p["memory_id"])))
    done = 0
    for i in range(0, len(payloads), _PAGE):
        page = payloads[i:i + _PAGE]
        have = graph.linked(namespace, [str(p["memory_id"]) for p in page])
        items = [(str(p["memory_id"]), payload_mentions(p), from_payload(p).type) for p in page
                 if str(p["memory_id"]) not in have]
        if items:
            graph.link(namespace, items)
            done += len(items)
    return done


def backfill_times(store: StoreParts, namespace: str) -> int:
    """Give the namespace's memories written before their times and slots were read (no payload
    `stated`) what this version reads from their text (see the module docstring); returns how many.
    A backend that cannot update payloads keeps serving them as before (found by `event_at` and
    `created_at`, versions by older keys), with a warning."""
    if not isinstance(store.vectors, PayloadWriter):
        _log.warning("memories of %r have no stated times and %s cannot update payloads: re-ingest them for "
                     "time questions about the dates their texts name", namespace, type(store.vectors).__name__)
        return 0
    done = 0
    page: list[Mapping[str, Any]] = []
    for p in store.vectors.scroll(namespace):
        if STATED not in p:
            page.append(p)
            if len(page) == _PAGE:
                done += _write_times(store, store.vectors, namespace, page)
                page = []
    return done + (_write_times(store, store.vectors, namespace, page) if page else 0)


def _write_times(store: StoreParts, writer: PayloadWriter, namespace: str, page: Sequence[Mapping[str, Any]]) -> int:
    memories = [from_payload(p) for p in page]
    ranked = [m for m in memories if m.indexed]
    facts = iter(store.extractor.analyze(ranked)[1]) if ranked else iter(())
    for m, p in zip(memories, page, strict=True):
        found = next(facts) if m.indexed else ()
        said = m.created_at or m.event_at
        meta = {k: v for k, v in m.metadata.items() if k not in (SLOT_FIELD, SLOTS_FIELD)} \
            if not (m.predicate and m.predicate.strip()) else dict(m.metadata)
        upgraded = m.with_(metadata=meta, stated_times=stated_times(m.text, said) if said else ())
        if m.indexed:
            upgraded = with_slot(upgraded, next((f.key for f in found if f.key), None), found)
        kinds = [k.kind for k in payload_mentions(p)]
        answers = list(p["answers"]) if isinstance(p.get("answers"), list) else answer_tags(m.text) if m.indexed else []
        writer.set_payload(namespace, [m.id], to_payload(upgraded, kinds, answers, slot_keys(upgraded)))
    return len(page)


def backfill_wording(store: StoreParts, namespace: str) -> int:
    """Give the namespace's memories written before their wording was kept (no payload `wording`,
    or one of another version) the wording of their stored text; returns how many. A backend that
    cannot update payloads keeps serving them, their wording read from the text at query time, with
    a warning."""
    if not isinstance(store.vectors, PayloadWriter):
        _log.warning("memories of %r keep no wording and %s cannot update payloads: the stage after fusion "
                     "reads their texts at query time", namespace, type(store.vectors).__name__)
        return 0
    done = 0
    for p in store.vectors.scroll(namespace):
        if of_payload(p) is None:
            entry = wording_json(read_text(str(p["text"])))
            store.vectors.set_payload(namespace, [str(p["memory_id"])], {WORDING: entry})
            done += 1
    return done


def _untagged(vectors: VectorBackend, namespace: str) -> dict[tuple[str, tuple[str, ...]], list[str]]:
    out: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for p in vectors.scroll(namespace):
        if "answers" not in p:
            out.setdefault((namespace, tuple(answer_tags(str(p.get("text", ""))))), []).append(str(p["memory_id"]))
    return out


class NamespaceUpgrades:
    """Which namespaces this process has brought up to date (see the module docstring). The work
    runs under the store's write lock, so this process's own writes wait for it rather than cross
    it; the second search of a namespace waits for the first's upgrade rather than repeating it."""

    def __init__(self) -> None:
        self._done: set[str] = set()
        self._lock = threading.Lock()

    def reset(self) -> None:
        """Forget (a reopen reads the meta again)."""
        with self._lock:
            self._done.clear()

    def ensure(self, store: StoreParts, namespace: str) -> dict[str, int]:
        """Upgrade `namespace` once per process, if the store's meta says it may need it; returns
        what was done (empty: nothing). The wording is left to `upgrade_all` (module docstring)."""
        todo = pending(store.vectors, store._meta, store.graph) - {WORDING_UPGRADE}
        if not todo or namespace in self._done or not isinstance(namespace, str):
            return {}
        with store._write_lock:
            if namespace in self._done:
                return {}
            done, ok = self._upgrade(store, namespace, todo)
            if ok:
                with self._lock:
                    self._done.add(namespace)
            return done

    def upgrade_all(self, store: StoreParts) -> dict[str, int]:
        """Every namespace, then the meta records it for every process (`MemoryStore.upgrade`)."""
        totals: dict[str, int] = {}
        with store._write_lock:
            todo = pending(store.vectors, store._meta, store.graph)
            if not todo:
                return totals
            complete = True
            for namespace in store.vectors.namespaces():
                done, ok = self._upgrade(store, namespace, todo)
                complete = complete and ok
                for name, n in done.items():
                    totals[name] = totals.get(name, 0) + n
            if complete:
                store._meta = write_merged(store.vectors, {**store._meta,
                                                           "upgraded": wanted(store.vectors, store.graph)})
        return totals

    @staticmethod
    def _upgrade(store: StoreParts, namespace: str, todo: frozenset[str]) -> tuple[dict[str, int], bool]:
        done: dict[str, int] = {}
        ok = True
        if SPARSE in todo:
            done[SPARSE] = backfill_sparse(store.vectors, store.lexical, namespace)
        if GRAPH in todo and isinstance(store.graph, EngineGraphStore):
            done[GRAPH] = backfill_graph(store.vectors, store.graph, namespace)
        if TIMES in todo:
            done[TIMES] = backfill_times(store, namespace)
        if WORDING_UPGRADE in todo:
            done[WORDING_UPGRADE] = backfill_wording(store, namespace)
        if ANSWERS in todo:
            untagged = _untagged(store.vectors, namespace)
            ok = not untagged or backfill(store.vectors, untagged)
            done[ANSWERS] = sum(len(ids) for ids in untagged.values()) if ok else 0
        if any(done.values()):
            _log.info("brought namespace %r up to date: %s (memories written by an older fused-memory; "
                      "MemoryStore.upgrade() does every namespace once, for every process)", namespace, done)
        return done, ok
