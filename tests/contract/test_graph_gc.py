"""Deleting memories deletes the names only they mentioned (`fused_memory.backends.graph.gc`), on every
graph backend: gone from `entities`, `resolve`, traversal and the raw storage (the SQLite file,
reopened; the graph on the Bolt server, queried directly; every payload of the engine graph's
collection). Names the user asserted (`relate`, `add_alias`) and names other memories still mention stay."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from graph_contract import NOW, NS, Factory, details, link, scores

from fused_memory.backends.graph import cypher as graph_cypher
from fused_memory.backends.graph import embedded as graph_embedded
from fused_memory.backends.protocols import GraphStore
from fused_memory.types import EntityMention as M
from fused_memory.types import Relation


def stored_strings(make: Factory, g: GraphStore) -> list[str]:
    """Every string the backend's storage holds: all SQLite columns, or all node and edge properties."""
    if make.backend == "embedded":  # type: ignore[attr-defined]
        with closing(sqlite3.connect(Path(g.path) / "graph.sqlite3")) as db:  # type: ignore[attr-defined]
            tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            return [v for t in tables for row in db.execute(f'SELECT * FROM "{t}"') for v in row if isinstance(v, str)]
    if make.backend == "engine":  # type: ignore[attr-defined]  # every payload of the graph collection
        client = g.host.engine()  # type: ignore[attr-defined]
        records, _ = client.scroll(g.collection, limit=100_000, with_payload=True)  # type: ignore[attr-defined]
        props = [r.payload or {} for r in records]
        flat = [x for p in props for v in p.values() for x in (v if isinstance(v, list) else [v])]
        return [x for x in flat if isinstance(x, str)]
    with g._work() as w:  # type: ignore[attr-defined]
        props = [r["p"] for q in ("MATCH (n) RETURN properties(n) AS p", "MATCH ()-[r]->() RETURN properties(r) AS p")
                 for r in w.run(q)]
    flat = [x for p in props for v in p.values() for x in (v if isinstance(v, list) else [v])]
    return [x for x in flat if isinstance(x, str)]


def holds(make: Factory, g: GraphStore, word: str) -> bool:
    return any(word.lower() in s.lower() for s in stored_strings(make, g))


def ids(g: GraphStore) -> dict[str, int]:
    return {e.id: e.mentions for e in g.entities(NS)}


def test_deleting_the_only_memories_of_a_name_removes_it_from_storage(make: Factory) -> None:
    g = make()
    link(g, NS, ("z1", [M("Zelda Quist", "PERSON"), M("Acme", "ORG")]), ("z2", [M("Zelda", "PERSON")]),
         ("a1", [M("Acme", "ORG")]))
    assert [e.id for e in g.resolve(NS, "Zelda")] == ["zelda quist"] and holds(make, g, "zelda")
    v0 = g.entity_version(NS)
    g.unlink(NS, ["z1", "z2"])
    for now in True, False:
        assert ids(g) == {"acme": 1}
        assert g.resolve(NS, "Zelda") == [] and g.resolve(NS, "Zelda Quist") == [] and g.resolve(NS, "Quist") == []
        assert scores(g, [("zelda quist", 1.0)]) == {} and scores(g, [("zelda", 1.0)]) == {}
        assert dict(g.stats(NS)) == {"entities": 1, "memories": 1, "mentions": 1, "relations": 0, "co_mentions": 0}
        assert not holds(make, g, "zelda") and not holds(make, g, "quist")
        if now:
            assert g.entity_version(NS) != v0  # cached matchers drop the name
            g = make()  # a new store object over the same storage
        elif make.backend == "embedded":  # type: ignore[attr-defined]
            # the closed file's bytes too (secure_delete): the WAL of the open store was checkpointed
            assert not any(b"zelda" in f.read_bytes().lower() for f in Path(g.path).iterdir())  # type: ignore


def test_rewriting_a_memory_without_the_name_removes_it(make: Factory) -> None:
    g = make()
    link(g, NS, ("m1", [M("Zelda Quist", "PERSON")]))
    link(g, NS, ("m1", [M("Acme", "ORG")]))  # the same memory, re-linked: its mentions are replaced
    assert ids(g) == {"acme": 1} and not holds(make, g, "zelda")


def test_a_name_another_memory_mentions_stays_with_its_count_decremented(make: Factory) -> None:
    g = make()
    link(g, NS, ("z1", [M("Zelda Quist", "PERSON"), M("Acme", "ORG")]), ("z2", [M("Zelda", "PERSON")]))
    link(g, NS, ("z3", [M("Zelda Quist", "PERSON")]))
    assert ids(g) == {"acme": 1, "zelda quist": 3}
    g.unlink(NS, ["z1", "z2"])
    assert ids(g) == {"zelda quist": 1}
    (zelda,) = g.resolve(NS, "Zelda")
    assert zelda.id == "zelda quist" and zelda.mentions == 1 and "Zelda" in zelda.aliases
    assert scores(g, [("zelda", 1.0)]) == {"z3": 1.0}
    g.unlink(NS, ["z3"])
    assert ids(g) == {} and not holds(make, g, "zelda")


def test_related_and_aliased_names_are_the_users_facts_and_stay(make: Factory) -> None:
    g = make()
    link(g, NS, ("z", [M("Zelda Quist", "PERSON")]), ("k", ["Kestrel"]), ("y", [M("Yuri Bell", "PERSON")]),
         ("x", [M("Xena Ward", "PERSON")]), ("w", [M("Walt Ives", "PERSON")]))
    g.relate(NS, Relation("Zelda Quist", "owns", "Kestrel", "structural", 1.0))
    g.add_alias(NS, "Yuri Bell", "YB")
    g.add_alias(NS, "Xena Ward", "Xena")  # the shape of a derived alias, but asked for
    g.unlink(NS, ["z", "k", "y", "x", "w"])
    for _ in "now", "reopened":  # reopening (the embedded store's sweep) keeps them too
        ents = {e.id: e for e in g.entities(NS)}
        assert set(ents) == {"zelda quist", "kestrel", "yuri bell", "xena ward"}  # Walt Ives is gone
        assert ents["zelda quist"].relations == (("owns", True),) and ents["kestrel"].relations == (("owns", False),)
        assert "YB" in ents["yuri bell"].aliases and "Xena" in ents["xena ward"].aliases
        assert all(e.mentions == 0 for e in ents.values())
        assert [e.id for e in g.resolve(NS, "YB")] == ["yuri bell"]
        assert [e.id for e in g.resolve(NS, "xena")] == ["xena ward"]
        assert not holds(make, g, "walt") and g.collect_orphans(NS) == 0  # type: ignore[attr-defined]
        g = make()


def test_co_mentions_with_a_deleted_name_go_with_it(make: Factory) -> None:
    g = make()
    link(g, NS, ("both", [M("Zelda Quist", "PERSON"), M("Acme", "ORG")]), ("zq", [M("Zelda Quist", "PERSON")]),
         ("acme", [M("Acme", "ORG")]))
    assert details(g, [("acme", 1.0)])["zq"] == "Acme -co_mentioned- Zelda Quist, 1 hop"
    assert g.stats(NS)["co_mentions"] == 1
    g.unlink(NS, ["both", "zq"])
    assert g.stats(NS)["co_mentions"] == 0
    hits = g.traverse(NS, [("acme", 1.0)], 3, 50, NOW)
    assert [(h.memory_id, h.detail) for h in hits] == [("acme", "names Acme")]
    assert ids(g) == {"acme": 1} and not holds(make, g, "zelda")
    if make.backend == "cypher":  # type: ignore[attr-defined]
        with g._work() as w:  # type: ignore[attr-defined]
            assert w.run("MATCH ()-[c:CO]->() RETURN count(c) AS n")[0]["n"] == 0
            kept = [r["k"] for r in w.run("MATCH (m:Memory) RETURN m.key AS k")]
            assert [r["r"] for r in w.run("MATCH (e:Entity) RETURN e.recent AS r")] == [kept]  # Acme's


def test_a_deleted_name_planted_by_older_code_is_collected(make_legacy: Factory,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A store written before this collection kept its orphans, and did not mark the names given to
    `add_alias`. The embedded store collects single names when it opens (a group of several may be
    the user's own alias: review found "Xena" for "Xena Ward" deleted on upgrade), the Cypher store
    nothing (open does not scan a server's graph); `collect_orphans` then takes a group whose other
    names the alias rules could have made, and keeps an old explicit alias by its shape or kind
    (`gc`: an ORG gets no first-name aliases)."""
    with monkeypatch.context() as old:  # the code before: no collection, no marks
        old.setattr(graph_embedded, "collect_space", lambda sp, ids, **kw: [], raising=False)
        old.setattr(graph_cypher, "collect_keys", lambda w, ns, keys: 0, raising=False)
        make = make_legacy
        g = make()
        link(g, NS, ("z", [M("Zelda Quist", "PERSON")]), ("z2", [M("Zelda", "PERSON")]), ("a", ["Acme"]),
             ("p", [M("Project Nova", "PRODUCT")]), ("k", [M("Kestrel", "ORG")]),
             ("gc", [M("Globex Corporation", "ORG")]))
        g.add_alias(NS, "Project Nova", "PN")
        g.add_alias(NS, "Globex Corporation", "Globex")
        g.unlink(NS, ["z", "z2", "p", "k", "gc"])
        _unmark(make, g)
        assert set(ids(g)) == {"zelda quist", "acme", "project nova", "kestrel", "globex corporation"}
    g = make()  # opened by today's code
    embedded = make.backend == "embedded"  # type: ignore[attr-defined]
    assert holds(make, g, "zelda") and holds(make, g, "kestrel") != embedded
    assert g.collect_orphans(NS) == (2 if embedded else 3)  # type: ignore[attr-defined] # (+ Kestrel) Zelda Quist, Zelda
    assert ids(g) == {"acme": 1, "project nova": 0, "globex corporation": 0} and not holds(make, g, "zelda")
    assert [e.id for e in g.resolve(NS, "PN")] == ["project nova"]
    assert [e.id for e in g.resolve(NS, "Globex")] == ["globex corporation"]
    assert g.collect_orphans(NS) == 0  # type: ignore[attr-defined]


def _unmark(make: Factory, g: Any) -> None:
    """Forget which names were given to add_alias, as a store written before the marks would."""
    if make.backend == "embedded":  # type: ignore[attr-defined]
        with closing(sqlite3.connect(Path(g.path) / "graph.sqlite3")) as db:
            db.execute("DROP TABLE IF EXISTS asserted")  # the old schema had none
            db.commit()
    else:
        with g._work(write=True) as w:
            w.run("MATCH (e:Entity) WHERE e.asserted = true SET e.asserted = null")


def test_reconcile_collects_the_names_of_the_memories_it_unlinks(tmp_path: Path) -> None:
    """The embedded graph's repair on open (a delete that reached the vectors but not the graph)."""
    g = graph_embedded.EmbeddedGraphStore(str(tmp_path / "graph"))
    link(g, NS, ("z", [M("Zelda Quist", "PERSON"), M("Acme", "ORG")]), ("a", [M("Acme", "ORG")]))
    assert g.reconcile({NS: {"a": ([M("Acme", "ORG")], None)}}) == (0, 1)
    assert ids(g) == {"acme": 1} and g.resolve(NS, "Zelda") == []
    g.close()


@pytest.mark.slow  # the Bolt server
def test_a_stale_count_never_deletes_a_mentioned_name(make_cypher: Factory) -> None:
    """FalkorDB has no rollback: a write cut short can leave `df`/`gdf` behind the edges. The delete
    re-checks the edges themselves, so such an entity is kept (and the next write recounts it)."""
    g = make_cypher()
    link(g, NS, ("z", [M("Zelda Quist", "PERSON")]), ("k", ["Kestrel"]))
    with g._work(write=True) as w:
        w.run("MATCH (e:Entity) SET e.df = 0, e.gdf = 0")
    assert g.collect_orphans(NS) == 0
    assert set(ids(g)) == {"zelda quist", "kestrel"} and g.mentions_of(NS, "z") == ["zelda quist"]


def test_hostile_and_long_names_are_collected_as_data(make: Factory) -> None:
    """Quotes, Cypher fragments, non-ASCII and names FalkorDB stores in pieces go like any other;
    the server-side shape rule splits "Zoë O'Brien" as the embedded store does."""
    g = make()
    names = ["Zoë O'Brien", "Zoë", "}) DETACH DELETE n //", "\\' OR 1=1 //", "中文 😀 naïve", "x" * 10_000,
             "Quist " + "q" * 3_000, "Quist"]
    link(g, NS, *[(f"m{i}", [M(s, "PERSON")]) for i, s in enumerate(names)], ("keep", ["Keeper"]))
    assert [e.id for e in g.resolve(NS, "Zoë")] == ["zoë o'brien"]
    assert [e.id for e in g.resolve(NS, "Quist")] == ["quist " + "q" * 3_000]  # a derived alias
    g.unlink(NS, [f"m{i}" for i in range(len(names))])
    assert ids(g) == {"keeper": 1} and dict(g.stats(NS))["entities"] == 1
    assert not any(holds(make, g, w) for w in ("zoë", "quist", "detach", "1=1", "中文", "xxxx"))


@pytest.mark.slow  # the Bolt server
def test_a_collection_by_another_writer_mid_link_loses_no_mention(make_cypher: Factory, bolt_server: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Two processes on one server: A deletes the last memory naming Zelda while B links a new one
    naming her. B planned "zelda quist" as existing, A's collection deleted it, and B's mention
    then matched nothing, silently (review: 124 of 772 links under contention). B now sees the
    short write and runs its upsert again, which re-creates the entity; `relate` likewise."""
    from fused_memory.backends.graph import dialect as cypher_dialect
    from fused_memory.backends.graph.queries import Q_NEW_MEM, Q_REL

    b = make_cypher()
    a = graph_cypher.CypherGraphStore(bolt_server)
    a.open()
    try:
        link(b, NS, ("old", [M("Zelda Quist", "PERSON")]), ("acme", [M("Acme", "ORG")]))
        fired: list[str] = []
        real_batch, real_run = cypher_dialect.Work.batch, cypher_dialect.Work.run

        def batch(self: Any, query: str, key: str, rows: Any, **params: Any) -> Any:
            if query == Q_NEW_MEM and not fired:  # B has planned; A collects before B writes
                fired.append("link")
                a.unlink(NS, ["old"])
            return real_batch(self, query, key, rows, **params)

        def run(self: Any, query: str, **params: Any) -> Any:
            if query == Q_REL and len(fired) == 1:  # the same between relate's plan and its edge
                fired.append("relate")
                a.unlink(NS, ["new"])
            return real_run(self, query, **params)

        monkeypatch.setattr(cypher_dialect.Work, "batch", batch)
        link(b, NS, ("new", [M("Zelda Quist", "PERSON")]))
        assert fired == ["link"] and ids(b) == {"acme": 1, "zelda quist": 1}
        monkeypatch.setattr(cypher_dialect.Work, "run", run)
        b.relate(NS, Relation("Zelda Quist", "works_at", "Acme", "structural", 1.0, None, None))
        assert fired == ["link", "relate"]
        assert [(e.id, e.relations) for e in b.entities(NS)] == [("acme", (("works_at", False),)),
                                                                 ("zelda quist", (("works_at", True),))]
    finally:
        a.close()


def _secure_delete_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """Open the embedded graph's file as SQLite builds that default to `secure_delete=OFF` do (this
    machine's Debian build defaults to ON, so without this the bytes check below cannot fail)."""
    real = sqlite3.connect

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        db = real(*args, **kwargs)
        db.execute("PRAGMA secure_delete=OFF")
        return db

    monkeypatch.setattr(graph_embedded.sqlite3, "connect", connect)


def test_a_collected_name_leaves_neither_the_file_nor_the_open_write_ahead_log(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review: the log of an open store (and of one that crashed before closing) still held it."""
    _secure_delete_off(monkeypatch)
    g = graph_embedded.EmbeddedGraphStore(str(tmp_path / "graph"))
    link(g, NS, ("z", [M("Zelda Quist", "PERSON")]), ("a", [M("Acme", "ORG")]))
    g.unlink(NS, ["z"])
    files = [f for f in (tmp_path / "graph").iterdir() if f.is_file()]
    assert files and not any(b"zelda" in f.read_bytes().lower() for f in files)  # still open
    g.close()
    assert not any(b"zelda" in f.read_bytes().lower() for f in (tmp_path / "graph").iterdir())


def test_a_store_written_before_the_asserted_table_opens_read_only(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Creating the new table is a write: a read-only copy of an older store stopped opening (review)."""
    g = graph_embedded.EmbeddedGraphStore(str(tmp_path / "graph"))
    link(g, NS, ("a", [M("Acme", "ORG")]))
    g.close()
    with closing(sqlite3.connect(tmp_path / "graph" / "graph.sqlite3")) as db:
        db.execute("DROP TABLE asserted")  # the schema before it
        db.commit()
    real = sqlite3.connect
    monkeypatch.setattr(graph_embedded.sqlite3, "connect",
                        lambda path, **kw: real(f"file:{path}?mode=ro", uri=True, **kw))
    ro = graph_embedded.EmbeddedGraphStore(str(tmp_path / "graph"))
    ro.open()
    assert ids(ro) == {"acme": 1}
    ro.close()


def test_an_alias_moved_away_leaves_no_orphan_behind(make: Factory) -> None:
    """"Zelda" (mentioned first, then folded into "Zelda Quist") kept the group alive once "Zelda
    Quist"'s own memory went; moving "Zelda" to Zara Quist with add_alias left "zelda quist" with
    nothing to keep it (review)."""
    g = make()
    link(g, NS, ("m1", [M("Zelda", "PERSON")]))
    link(g, NS, ("m2", [M("Zelda Quist", "PERSON")]))  # folds the earlier "Zelda" into it
    g.unlink(NS, ["m2"])
    assert set(ids(g)) == {"zelda quist"}  # kept by m1's mention of "Zelda"
    g.add_alias(NS, "Zara Quist", "Zelda")
    assert ids(g) == {"zara quist": 1} and not holds(make, g, "zelda quist")


@pytest.mark.slow  # the Bolt server
def test_a_retried_delete_after_a_cut_off_unlink_lets_collect_orphans_find_the_name(
        make_cypher: Factory, monkeypatch: pytest.MonkeyPatch) -> None:
    """FalkorDB has no rollback: an unlink cut off right after its memories went left the mention
    counts stale, the retry found no memory, and `collect_orphans` (which looked at the counts)
    never removed the name (review)."""
    from fused_memory.backends.graph import dialect as cypher_dialect
    from fused_memory.backends.graph.queries import Q_DEL_MEM
    from fused_memory.errors import BackendError

    g = make_cypher()
    link(g, NS, ("z", [M("Zelda Quist", "PERSON")]), ("a", [M("Acme", "ORG")]))
    real = cypher_dialect.Work.batch

    def cut(self: Any, query: str, key: str, rows: Any, **params: Any) -> Any:
        out = real(self, query, key, rows, **params)
        if query == Q_DEL_MEM:
            raise BackendError("connection lost")
        return out

    with monkeypatch.context() as m:
        m.setattr(cypher_dialect.Work, "batch", cut)
        with pytest.raises(BackendError):
            g.unlink(NS, ["z"])
    g.unlink(NS, ["z"])  # the retry: no memory left to find
    assert g.collect_orphans(NS) == 1  # type: ignore[attr-defined]
    assert ids(g) == {"acme": 1} and not holds(make_cypher, g, "zelda")
