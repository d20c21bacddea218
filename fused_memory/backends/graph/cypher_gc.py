"""Garbage collection on a Cypher graph: the rule of `gc`, run as server-side statements, and the
write discipline that keeps it safe beside other writers (a namespace lock on Neo4j, a retry on
FalkorDB). Kept apart from `gc` so that the embedded graph never loads the Cypher text."""

from __future__ import annotations

from collections.abc import Callable, Collection

from ...errors import BackendError
from .dialect import Work
from .queries import Q_BUMP, Q_GC, Q_GC_SWEEP, Q_LOCK

__all__ = ["collect_keys", "sweep_keys", "retry", "lock", "WRITE_ATTEMPTS"]


def collect_keys(w: Work, ns: str, keys: Collection[str]) -> int:
    """Delete the orphaned groups among the groups of entity `keys`, after their counts were
    recomputed; returns how many entities went. One statement per batch of keys (`Q_GC`: the rule
    of `gc.orphaned`, evaluated on the server, mentions and relations re-checked on the edges themselves, so
    neither a count gone stale, FalkorDB having no rollback, nor a concurrent writer can lose a
    referenced entity), and a version bump when something went."""
    if not keys:
        return 0
    gone = sum(int(r["n"]) for r in w.batch(Q_GC, "keys", sorted(keys), ns=ns))
    if gone:
        w.run(Q_BUMP, ns=ns)
    return gone


#: Attempts of a write whose planned entities another writer's collection deleted meanwhile.
WRITE_ATTEMPTS = 3


def retry(attempt: Callable[[], bool], what: str) -> None:
    """Run a Cypher write until it wrote everything it planned. On FalkorDB (no multi-statement
    transactions) another process's collection can delete an entity between this write's plan and
    its edge; the write is an upsert, so running it again re-creates the entity. Neo4j serializes
    the writers of a namespace instead (`lock`), so there the first attempt writes it all."""
    for _ in range(WRITE_ATTEMPTS):
        if attempt():
            return
    raise BackendError(f"graph {what}: entities it needs were deleted by another writer {WRITE_ATTEMPTS} times "
                       "in a row; nothing is lost, try again")


def lock(w: Work, ns: str) -> None:
    """Where the server runs a write as one transaction (Neo4j), take the namespace's GraphMeta
    write lock first: a collection cannot then delete an entity that another writer has planned
    but not yet linked (nor delete its new edge with it). FalkorDB runs each statement alone: there
    `retry` covers the race."""
    if w.dialect.explicit_transactions:
        w.run(Q_LOCK, ns=ns)


def sweep_keys(w: Work, ns: str) -> list[str]:
    """Keys of every canonical entity of `ns` that no memory mentions (a scan of the namespace's
    entities: for a one-off `collect_orphans`, never on a hot path)."""
    return [r["key"] for r in w.run(Q_GC_SWEEP, ns=ns)]
