"""EmbeddedGraphStore reads a namespace catalogue first (`backends.graph.partial`).

The spec: a namespace's first read loads its names and mention counts, not its memories; a walk
reads the memories and co-mentions of the entities it reaches; and every answer is the one the
store that wrote the graph gives (an in-memory twin fed the same writes), before and after writes
to the reopened store. A store written before the index of mentions by entity, opened where it
cannot be written, loads namespaces whole and answers the same.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from fused_memory.backends.graph import embedded as graph_embedded
from fused_memory.backends.graph.embedded import EmbeddedGraphStore
from fused_memory.types import EntityMention, MemoryType, Relation

NOW = datetime(2024, 5, 15, 12, 0, tzinfo=timezone.utc)
NS = "alice"
_FIRST = ["Sarah", "Tom", "Maya", "Ravi", "Lena", "Omar"]
_LAST = ["Chen", "Park", "Becker", "Okafor"]
_THINGS = [("Acme", "ORG"), ("Globex", "ORG"), ("Berlin", "GPE"), ("Kestrel", None), ("Falcon", None),
           ("Osprey v2", None), ("Lisbon", "GPE")]
_TYPES = [None, MemoryType.FACT, MemoryType.EVENT, MemoryType.PREFERENCE]


def _random_writes(seed: int) -> list[tuple[str, tuple[Any, ...]]]:
    """A history of writes with hubs, aliases made by first names, relations of every kind,
    re-links and unlinks (so link order is not id order and collection runs)."""
    rnd = random.Random(seed)
    people = [f"{f} {last}" for f in _FIRST for last in _LAST][:14]
    names: list[tuple[str, str | None]] = [(p, "PERSON") for p in people] + [(f, "PERSON") for f in _FIRST]
    names += _THINGS
    weights = [12 if n == "Kestrel" else 6 if n == "Sarah Chen" else 1 for n, _ in names]  # two hubs
    ops: list[tuple[str, tuple[Any, ...]]] = []
    for i in range(260):
        ms = {n: k for n, k in rnd.choices(names, weights, k=rnd.randint(0, 4))}
        ops.append(("link", (f"m{rnd.randint(0, 199)}", [EntityMention(n, k) for n, k in ms.items()],
                             rnd.choice(_TYPES))))
        if i % 23 == 0:
            ops.append(("unlink", ([f"m{rnd.randint(0, 199)}" for _ in range(3)],)))
        if i % 17 == 0:
            (a, _), (b, _) = rnd.sample(names, 2)
            kind = rnd.choice(["structural", "semantic", "lifecycle"])
            until = NOW + timedelta(days=rnd.choice([-30, 30])) if kind == "lifecycle" else None
            ops.append(("relate", (Relation(a, rnd.choice(["manages", "works_at", "knows"]), b, kind,
                                            rnd.choice([0.5, 0.8, 1.0]), valid_to=until),)))
    ops.append(("alias", ("Kestrel", "KS")))
    ops.append(("alias", ("Globex", "Globex Corp")))
    return ops


def _apply(g: EmbeddedGraphStore, ops: list[tuple[str, tuple[Any, ...]]], ns: str = NS) -> None:
    for op, args in ops:
        if op == "link":
            g.link(ns, [args])
        elif op == "unlink":
            g.unlink(ns, args[0])
        elif op == "relate":
            g.relate(ns, args[0])
        else:
            g.add_alias(ns, *args)


def _walks(g: EmbeddedGraphStore) -> list[Any]:
    """Every read a query makes, over every group as a seed: hits with scores and explanations."""
    groups = [e.id for e in g.entities(NS)]
    out: list[Any] = []
    for i, gid in enumerate(groups):
        for hops in (0, 1, 2, 3):
            for types in (None, frozenset({MemoryType.FACT, MemoryType.EVENT})):
                for limit in (5, 60):
                    hits = g.traverse(NS, [(gid, 1.0), (groups[(i + 7) % len(groups)], 0.6)], hops, limit, NOW,
                                      types=types, multi_hop_factor=0.9)
                    out.append((gid, hops, types, limit, [(h.memory_id, h.score, h.detail) for h in hits]))
        for rel in ("manages", "works_at"):
            hits = g.traverse(NS, [(gid, 1.0)], 2, 20, NOW, asked=[(gid, rel, False), (gid, rel, True)])
            out.append((gid, rel, [(h.memory_id, h.score, h.detail) for h in hits]))
    return out


def _reads(g: EmbeddedGraphStore) -> Any:
    names = sorted({n for e in g.entities(NS) for n in (e.name, *e.aliases)} | {"sarah", "tom", "nobody"})
    return (g.entities(NS), [g.resolve(NS, n) for n in names],
            [g.mentions_of(NS, f"m{i}") for i in range(200)], g.stats(NS))


@pytest.fixture
def written(tmp_path: Path) -> tuple[str, EmbeddedGraphStore, list[tuple[str, tuple[Any, ...]]]]:
    """The file store (closed) and its in-memory twin (open), fed the same writes."""
    ops = _random_writes(seed=5)
    path = str(tmp_path / "graph")
    g = EmbeddedGraphStore(path)
    g.open()
    _apply(g, ops)
    _apply(g, ops[:40], ns="bob")  # another namespace in the file: never read here
    g.close()
    twin = EmbeddedGraphStore(None)
    twin.open()
    _apply(twin, ops)
    return path, twin, ops


def test_a_reopened_store_walks_as_the_store_that_wrote_it(written: Any) -> None:
    path, twin, _ops = written
    want = _walks(twin)
    g = EmbeddedGraphStore(path)
    g.open()
    try:
        assert _walks(g) == want  # filled as the walks go: each reads what the ones before left
        assert _reads(g) == _reads(twin)
    finally:
        g.close()


def test_a_walk_answers_the_same_whatever_was_read_before_it(written: Any) -> None:
    path, twin, _ops = written
    groups = [e.id for e in twin.entities(NS)]
    for gid in groups[::3]:
        g = EmbeddedGraphStore(path)
        g.open()
        try:
            for hops in (2, 0, 3):  # a fresh store: this group's walk is the first read
                assert g.traverse(NS, [(gid, 1.0)], hops, 30, NOW) == twin.traverse(NS, [(gid, 1.0)], hops, 30, NOW)
        finally:
            g.close()


def test_writes_after_reads_answer_as_the_twin(written: Any) -> None:
    path, twin, ops = written
    more = _random_writes(seed=9)[:60]
    g = EmbeddedGraphStore(path)
    g.open()
    try:
        _walks(g)  # fills part of the namespace first
        _apply(g, more)
        _apply(twin, more)
        assert _walks(g) == _walks(twin)
        assert _reads(g) == _reads(twin)
    finally:
        g.close()


@contextmanager
def _traced(path: str) -> Iterator[tuple[EmbeddedGraphStore, list[str]]]:
    """The store reopened, and every SQL statement it runs from then on."""
    g = EmbeddedGraphStore(path)
    g.open()
    try:
        statements: list[str] = []
        assert g._db is not None
        g._db.set_trace_callback(statements.append)
        yield g, statements
    finally:
        g.close()


def test_a_namespaces_first_read_loads_its_catalogue_not_its_memories(written: Any) -> None:
    path, twin, _ops = written
    with _traced(path) as (g, statements):
        assert g.entities(NS) == twin.entities(NS)
        assert statements and not [s for s in statements if "FROM memory" in s]
        statements.clear()
        # a walk without hops reads the seed group's memories, by entity, and nothing else
        assert g.traverse(NS, [("falcon", 1.0)], 0, 10, NOW) == twin.traverse(NS, [("falcon", 1.0)], 0, 10, NOW)
        assert [s for s in statements if "FROM mention" in s] == \
            [s for s in statements if "JOIN memory" in s and "'falcon'" in s and "'kestrel'" not in s]
        statements.clear()
        g.traverse(NS, [("falcon", 1.0)], 0, 10, NOW)  # read once: the next walk reads memory alone
        assert [s for s in statements if "mention" in s] == []


def test_a_store_written_before_the_index_loads_whole_where_it_cannot_be_written(
        written: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    path, twin, _ops = written
    with closing(sqlite3.connect(Path(path) / "graph.sqlite3")) as db:
        db.execute("DROP INDEX mention_by_entity")  # the schema before it
        db.commit()
    real = sqlite3.connect
    monkeypatch.setattr(graph_embedded.sqlite3, "connect",
                        lambda p, **kw: real(f"file:{p}?mode=ro", uri=True, **kw))
    ro = EmbeddedGraphStore(path)
    ro.open()
    try:
        assert _walks(ro) == _walks(twin)
        assert _reads(ro) == _reads(twin)
    finally:
        ro.close()


def test_the_index_is_added_to_a_store_written_before_it(written: Any) -> None:
    path, twin, _ops = written
    with closing(sqlite3.connect(Path(path) / "graph.sqlite3")) as db:
        db.execute("DROP INDEX mention_by_entity")
        db.commit()
    g = EmbeddedGraphStore(path)
    g.open()
    g.close()
    with closing(sqlite3.connect(Path(path) / "graph.sqlite3")) as db:
        assert db.execute("SELECT 1 FROM sqlite_master WHERE name = 'mention_by_entity'").fetchone()


def test_stats_count_the_whole_namespace_read_once(written: Any) -> None:
    path, twin, _ops = written
    with _traced(path) as (g, statements):
        assert g.stats(NS) == twin.stats(NS)
        assert len([s for s in statements if "FROM entity" in s]) == 1  # whole at once, no catalogue first
        g.traverse(NS, [("kestrel", 1.0)], 2, 10, NOW)
        assert g.stats(NS) == twin.stats(NS)
