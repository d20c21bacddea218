"""An embedded store opens flat: its lexical index is read from its own files, not rebuilt from every
payload, and ranks exactly as an index built from the payloads would (the in-process `BM25Index`,
whose scores the unit tests check against rank-bm25). A postings file that is missing, truncated or
of another version is rebuilt from the payloads, logged once; a store written before the files
existed rebuilds once, then opens flat. Writes after a reopen (add, upsert, delete) are ranked too.

Everything is real: qdrant-edge, the SQLite log and journal, the graph; the reference index is built
from what the vector payloads hold (`recovery.namespace_docs`), the source of truth."""

from __future__ import annotations

import json
import logging
import random
import sqlite3
from pathlib import Path

import pytest
from helpers import damage_sqlite_pages

from fused_memory.backends.codec import LAYOUT_VERSION
from fused_memory.backends.lexical import segment as segment_module
from fused_memory.backends.lexical.bm25 import BM25Index
from fused_memory.backends.lexical.stored import DB_NAME, StoredBM25Index
from fused_memory.embeddings import HashingEmbedder
from fused_memory.store.journal import JOURNAL_NAME
from fused_memory.store.memory_store import MemoryStore
from fused_memory.store.recovery import JOURNALED_LAYOUT, namespace_docs
from fused_memory.types import Memory, MemoryType

NAMESPACES = ("alice", "bob")
WORDS = [f"w{i}x" for i in range(90)] + ["budget", "review", "meeting", "berlin", "badge", "E-4821"]
QUERIES = ["w0x", "w1x w2x", "budget review", "w3x w40x w79x", "meeting w0x w1x", "E-4821 badge", "w55x nothere",
           "berlin w7x w8x w9x", "nothing here at all"]
TYPES = [MemoryType.FACT, MemoryType.PREFERENCE, MemoryType.EVENT, None]
RECOVERY = "fused_memory.store.memory_store"
STORED = "fused_memory.backends.lexical.stored"


def _memory(rng: random.Random, mid: str, ns: str) -> Memory:
    weights = [1 / (r + 1) for r in range(len(WORDS))]
    text = " ".join(rng.choices(WORDS, weights, k=rng.randint(2, 16)))
    pred = " ".join(rng.choices(WORDS, weights, k=2)) if rng.random() < 0.3 else None
    ctx = " ".join(rng.choices(WORDS, weights, k=5)) if rng.random() < 0.2 else None
    return Memory(text=text, namespace=ns, id=mid, type=rng.choice(TYPES), predicate=pred, context=ctx)


def _open(path: Path) -> MemoryStore:
    return MemoryStore.embedded(path, embedder=HashingEmbedder(dim=64), ner=False, show_progress=False).open()


#: Each (namespace, query, k)'s ranked ids and scores.
Answers = dict[tuple[str, str, int], list[tuple[str, float]]]


def _answers(store: MemoryStore) -> Answers:
    return {(ns, q, k): store.lexical_search(ns, q, k) for ns in NAMESPACES for q in QUERIES for k in (1, 10)}


def _next_open_is_flat_and_quiet(written: Path, before: Answers, caplog: pytest.LogCaptureFixture, *,
                                 nothing_loaded: bool = False) -> None:
    """The open after a repair or a rebuild: no line logged, (`nothing_loaded`) no namespace's
    postings read before a query asks, and the answers of before."""
    caplog.clear()
    again = _open(written)
    try:
        assert not [r for r in caplog.records if r.name in (RECOVERY, STORED)]
        if nothing_loaded:
            assert not again.lexical._shards  # type: ignore[attr-defined]
        assert _answers(again) == before
    finally:
        again.close()


def _ranks_as_its_payloads(store: MemoryStore) -> None:
    """The store's lexical arm answers exactly as a `BM25Index` built now from its payloads."""
    assert isinstance(store.lexical, StoredBM25Index)
    for ns in NAMESPACES:
        ref = BM25Index()
        ref.add(list(namespace_docs(store.vectors, ns)))
        assert store.lexical.count(ns) == ref.count(ns)
        assert store.lexical.type_counts(ns) == ref.type_counts(ns)
        for q in QUERIES:
            assert store.lexical.raw_scores(ns, q) == ref.raw_scores(ns, q), (ns, q)
            for types in (None, frozenset({MemoryType.FACT}), frozenset({MemoryType.PREFERENCE, MemoryType.EVENT})):
                for k in (1, 10, 50):
                    assert store.lexical_search(ns, q, k, types) == ref.search(ns, q, k, types), (ns, q, k, types)


@pytest.fixture
def written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store of 2 x 400 memories, upserted and deleted in part, whose lexical index has merged into
    postings files (small merges, so a test-sized store has them) and still holds a log."""
    from fused_memory.backends.lexical.bm25 import _Shard

    monkeypatch.setattr(_Shard, "MERGE_MIN", 64)
    rng = random.Random(11)
    store = MemoryStore.embedded(tmp_path / "store", embedder=HashingEmbedder(dim=64), ner=False,
                                 show_progress=False)
    try:
        for start in range(0, 400, 100):
            store.add([_memory(rng, f"m{i}", ns) for ns in NAMESPACES for i in range(start, start + 100)])
        store.add([_memory(rng, f"m{i}", "alice") for i in range(0, 400, 7)])  # upserts
        store.delete("bob", [f"m{i}" for i in range(0, 400, 11)])
        store.add([_memory(rng, f"late{i}", ns) for ns in NAMESPACES for i in range(30)])  # stays in the log
    finally:
        store.close()
    assert list((tmp_path / "store" / "lexical").glob("*.seg"))
    return tmp_path / "store"


def _file_of(store: Path, namespace: str) -> Path:
    with sqlite3.connect(store / "lexical" / DB_NAME) as db:
        (name,) = db.execute("SELECT file FROM segment WHERE ns = ?", (namespace,)).fetchone()
    return store / "lexical" / name


def test_a_reopened_store_reads_no_postings_and_ranks_as_before(written: Path,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    first = _open(written)
    try:
        before = _answers(first)
        _ranks_as_its_payloads(first)
    finally:
        first.close()
    caplog.set_level(logging.INFO)
    store = _open(written)
    try:
        assert isinstance(store.lexical, StoredBM25Index)
        assert not store.lexical._shards, "open() loaded a namespace's postings"
        assert "reading every memory" not in caplog.text and "rebuilding" not in caplog.text
        assert _answers(store) == before
        _ranks_as_its_payloads(store)
    finally:
        store.close()


def test_writes_after_a_reopen_are_ranked_and_kept(written: Path) -> None:
    rng = random.Random(5)
    store = _open(written)
    try:
        store.add([_memory(rng, f"new{i}", ns) for ns in NAMESPACES for i in range(40)])   # add
        store.add([_memory(rng, f"m{i}", "bob") for i in range(1, 400, 5)])                # upsert
        store.delete("alice", [f"m{i}" for i in range(3, 400, 9)] + ["new0"])              # delete
        _ranks_as_its_payloads(store)
        after = _answers(store)
        assert not any(mid == "new0" for (ns, _, _), hits in after.items() if ns == "alice" for mid, _ in hits)
    finally:
        store.close()
    again = _open(written)
    try:
        assert _answers(again) == after
        _ranks_as_its_payloads(again)
    finally:
        again.close()


def _damage(written: Path, how: str) -> None:
    if how == "missing":
        _file_of(written, "bob").unlink()
    elif how == "truncated":
        path = _file_of(written, "bob")
        path.write_bytes(path.read_bytes()[:-200])
    elif how == "other file format":  # same size, another format number in its header: found on first use
        path = _file_of(written, "bob")
        data = path.read_bytes()
        at = data.index(b'"format": ') + len(b'"format": ')
        path.write_bytes(data[:at] + b"9" + data[at + 1:])
    else:  # "other version": the index's meta records another format
        with sqlite3.connect(written / "lexical" / DB_NAME) as db:
            db.execute("UPDATE meta SET value = ? WHERE key = 'format'", (str(segment_module.FORMAT + 1),))


@pytest.mark.parametrize("how", ["missing", "truncated", "other file format", "other version"])
def test_a_damaged_or_foreign_postings_file_is_rebuilt_logged_once_and_ranks_the_same(
        written: Path, how: str, caplog: pytest.LogCaptureFixture) -> None:
    reference = _open(written)
    try:
        before = _answers(reference)
    finally:
        reference.close()
    _damage(written, how)
    caplog.set_level(logging.WARNING)
    store = _open(written)
    try:
        assert _answers(store) == before  # the first use of 'bob' finds a file damaged in place
        lines = [r.getMessage() for r in caplog.records if r.name in (RECOVERY, STORED)]
        assert len(lines) == 1, lines
        assert ("reading every memory" in lines[0]) == (how == "other version"), lines
        assert "bob" in lines[0] or how == "other version", lines
        _ranks_as_its_payloads(store)
    finally:
        store.close()
    _next_open_is_flat_and_quiet(written, before, caplog)  # rebuilt once


def test_a_store_written_before_the_files_rebuilds_once_then_opens_flat(
        written: Path, caplog: pytest.LogCaptureFixture) -> None:
    """What an older fused-memory leaves: layout 1, no lexical folder, no journal."""
    reference = _open(written)
    try:
        before = _answers(reference)
    finally:
        reference.close()
    for path in sorted((written / "lexical").iterdir()):
        path.unlink()
    (written / "lexical").rmdir()
    for suffix in ("", "-wal", "-shm"):
        (written / f"{JOURNAL_NAME}{suffix}").unlink(missing_ok=True)
    meta_path = written / "vectors" / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta_path.write_text(json.dumps({**meta, "layout": LAYOUT_VERSION}))
    caplog.set_level(logging.WARNING)
    store = _open(written)
    try:
        lines = [r.getMessage() for r in caplog.records if r.name in (RECOVERY, STORED)]
        assert len(lines) == 1 and "reading every memory" in lines[0], lines
        assert _answers(store) == before
    finally:
        store.close()
    assert json.loads(meta_path.read_text())["layout"] == JOURNALED_LAYOUT
    _next_open_is_flat_and_quiet(written, before, caplog, nothing_loaded=True)


@pytest.mark.parametrize("what", ["lexical database past page 1", "journal garbage"])
def test_an_unreadable_database_is_set_aside_and_the_store_opens_logged_once(
        written: Path, what: str, caplog: pytest.LogCaptureFixture) -> None:
    """A lexical database damaged past its first page, or a journal that is not a database, made
    the store unopenable (sqlite3.DatabaseError, BackendError). Either is one line, then a scan."""
    reference = _open(written)
    try:
        before = _answers(reference)
    finally:
        reference.close()
    if what == "journal garbage":
        (written / JOURNAL_NAME).write_bytes(b"this is not a database" * 300)
    else:
        with sqlite3.connect(written / "lexical" / DB_NAME) as db:  # all but the schema's and the meta's pages
            pages = [p for (p,) in db.execute("SELECT pageno FROM dbstat WHERE name NOT IN ('sqlite_schema', 'meta')")]
        damage_sqlite_pages(written / "lexical" / DB_NAME, pages)
    caplog.set_level(logging.WARNING)
    store = _open(written)
    try:
        lines = [r.getMessage() for r in caplog.records if r.name in (RECOVERY, STORED)]
        assert len(lines) == 1 and "reading every memory" in lines[0], lines
        assert ("write journal could not be read" in lines[0]) == (what == "journal garbage"), lines
        assert _answers(store) == before
        _ranks_as_its_payloads(store)
    finally:
        store.close()
    if what == "journal garbage":
        assert (written / f"{JOURNAL_NAME}.unreadable").read_bytes().startswith(b"this is not")
    _next_open_is_flat_and_quiet(written, before, caplog)  # set right


def test_the_journal_lexical_log_and_graph_commit_durably(written: Path) -> None:
    """The order that survives a power loss: the journal's intent is fsync'd before the vectors are
    written, and the lexical log and the graph before the journal entry is cleared (FULL)."""
    store = _open(written)
    try:
        store.add([_memory(random.Random(3), "durable", "alice")])
        assert store.journal is not None and store.graph is not None
        for db in (store.journal._require(), store.lexical._require(), store.graph._db):  # type: ignore[attr-defined]
            assert db.execute("PRAGMA synchronous").fetchone() == (2,)  # FULL
    finally:
        store.close()


def test_a_failed_open_releases_the_lexical_index_without_merging(
        written: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An open that fails must leave the files as they were: `close` merges long logs, its error
    path must not."""
    from fused_memory.backends.lexical import stored as stored_module
    from fused_memory.backends.lexical.bm25 import _Shard
    from fused_memory.store import recovery

    monkeypatch.setattr(_Shard, "MERGE_MIN", 1024)  # the 300 rows below stay in the log
    monkeypatch.setattr(stored_module, "MERGE_ON_CLOSE", 10**9)
    store = _open(written)
    try:
        store.add([_memory(random.Random(4), f"long{i}", "alice") for i in range(300)])  # < MERGE_MIN
    finally:
        store.close()
    monkeypatch.setattr(stored_module, "MERGE_ON_CLOSE", 256)
    files = sorted(p.name for p in (written / "lexical").glob("*.seg"))

    def broken(*args: object) -> None:
        raise RuntimeError("open failed")

    monkeypatch.setattr(recovery, "_why_scan", broken)
    with pytest.raises(RuntimeError, match="open failed"):
        _open(written)
    assert sorted(p.name for p in (written / "lexical").glob("*.seg")) == files
    with sqlite3.connect(written / "lexical" / DB_NAME) as db:
        (rows,) = db.execute("SELECT count(*) FROM log WHERE ns = 'alice'").fetchone()
    assert rows >= 300
