"""StoredBM25Index: BM25Index kept in files. Reopened, it ranks exactly as an index built in one go
from the same documents; opening reads no postings; a file it cannot use is reported, never read."""

from __future__ import annotations

import json
import logging
import random
import sqlite3
from pathlib import Path

import pytest
from helpers import damage_sqlite_pages

from fused_memory.backends.lexical import stored as stored_module
from fused_memory.backends.lexical import topk as bm25_topk
from fused_memory.backends.lexical.bm25 import BM25Index, _Shard
from fused_memory.backends.lexical.stored import DB_NAME, MERGE_ON_CLOSE, StoredBM25Index
from fused_memory.backends.protocols import IndexState, LexicalDoc, LexicalIndex, PersistedIndex, TypeCounter
from fused_memory.errors import BackendError, StoreClosed
from fused_memory.types import MemoryType

FACT, PREF, EVENT = MemoryType.FACT, MemoryType.PREFERENCE, MemoryType.EVENT
NAMESPACES = ("alice", "bob", "carol")
WORDS = [f"w{i}x" for i in range(120)]
QUERIES = ["w0x", "w1x w2x", "w3x w40x w79x", "w0x w1x w2x w3x w4x", "w55x w61x", "w0x nothere", "w7x w7x w8x",
           "E-4821", "w100x w0x"]


def _doc(rng: random.Random, mid: str, ns: str) -> LexicalDoc:
    weights = [1 / (r + 1) for r in range(len(WORDS))]
    text = " ".join(rng.choices(WORDS, weights, k=rng.randint(1, 14)))
    if rng.random() < 0.1:
        text += f" E-{rng.randint(4800, 4830)}"
    pred = " ".join(rng.choices(WORDS, weights, k=2)) if rng.random() < 0.3 else None
    ctx = " ".join(rng.choices(WORDS, weights, k=4)) if rng.random() < 0.2 else None
    return LexicalDoc(mid, ns, text, pred, rng.choice([FACT, PREF, EVENT, None]), ctx)


def _rebuilt(live: dict[tuple[str, str], LexicalDoc]) -> BM25Index:
    """What the index must equal: one built in a single write from the live documents."""
    ref = BM25Index()
    ref.add(list(live.values()))
    return ref


def _same_rankings(index: BM25Index, live: dict[tuple[str, str], LexicalDoc], rng: random.Random) -> None:
    ref = _rebuilt(live)
    queries = QUERIES + [" ".join(rng.choices(WORDS, k=rng.randint(1, 5))) for _ in range(15)]
    for ns in NAMESPACES:
        assert index.count(ns) == ref.count(ns)
        assert index.type_counts(ns) == ref.type_counts(ns)
        assert sorted(index.memory_ids(ns)) == sorted(mid for n, mid in live if n == ns)
        for q in queries:
            assert index.raw_scores(ns, q) == ref.raw_scores(ns, q), (ns, q)
            for types in (None, frozenset({FACT}), frozenset({PREF, EVENT})):
                for k in (1, 5, 20):
                    assert index.search(ns, q, k, types) == ref.search(ns, q, k, types), (ns, q, k, types)


def _churn(index: BM25Index, live: dict[tuple[str, str], LexicalDoc], rng: random.Random, steps: int,
           tag: str) -> None:
    """Adds, upserts of existing ids and deletes, in batches of every size."""
    for step in range(steps):
        ns = rng.choice(NAMESPACES)
        roll = rng.random()
        if roll < 0.55 or not live:
            batch = [_doc(rng, f"{tag}{step}-{j}", ns) for j in range(rng.choice([1, 3, 40]))]
        elif roll < 0.8:
            ids = [mid for n, mid in live if n == ns]
            batch = [_doc(rng, mid, ns) for mid in rng.sample(ids, min(len(ids), rng.randint(1, 5)))]
        else:
            ids = [mid for n, mid in live if n == ns]
            gone = rng.sample(ids, min(len(ids), rng.randint(1, 4))) + ["never-written"]
            index.delete(ns, gone)
            for mid in gone:
                live.pop((ns, mid), None)
            continue
        index.add(batch)
        live.update({(d.namespace, d.memory_id): d for d in batch})


@pytest.fixture
def small_merges(monkeypatch: pytest.MonkeyPatch) -> None:
    """Merge the overlay after a few writes, and score most terms through columns, so a short
    test crosses many merges and both scoring paths."""
    monkeypatch.setattr(_Shard, "MERGE_MIN", 24)
    monkeypatch.setattr(bm25_topk.Pruner, "SCAN_LIMIT", 6)


def _opened(path: Path, **params: object) -> StoredBM25Index:
    index = StoredBM25Index(path, **params)  # type: ignore[arg-type]
    state = index.load()
    if state.whole is not None:
        index.rebuild(())
    return index


def test_implements_the_protocols(tmp_path: Path) -> None:
    index = StoredBM25Index(tmp_path / "lex")
    assert isinstance(index, LexicalIndex) and isinstance(index, PersistedIndex) and isinstance(index, TypeCounter)
    assert not (tmp_path / "lex").exists()  # the constructor does no I/O


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_reopened_index_ranks_exactly_as_one_built_from_its_documents(
        tmp_path: Path, seed: int, small_merges: None) -> None:
    rng = random.Random(seed)
    live: dict[tuple[str, str], LexicalDoc] = {}
    index = _opened(tmp_path / "lex")
    _churn(index, live, rng, 120, "a")
    _same_rankings(index, live, rng)
    index.close()
    for round_ in range(2):  # reopened, written to again (deletes and upserts), reopened again
        index = _opened(tmp_path / "lex")
        _same_rankings(index, live, rng)
        _churn(index, live, rng, 60, f"r{round_}")
        _same_rankings(index, live, rng)
        index.close()
    assert list((tmp_path / "lex").glob("*.seg")), "merges should have written postings files"


def test_the_default_merge_sizes_rank_as_a_rebuilt_index(tmp_path: Path) -> None:
    """Without the small test sizes: most writes stay in the log and the overlay (a namespace of
    a few hundred memories never merges), and `close` merges only long logs."""
    rng = random.Random(7)
    live: dict[tuple[str, str], LexicalDoc] = {}
    index = _opened(tmp_path / "lex")
    _churn(index, live, rng, 80, "a")
    index.close()
    index = _opened(tmp_path / "lex")
    _same_rankings(index, live, rng)
    index.close()


def test_opening_reads_no_postings_and_a_namespace_loads_on_first_use(tmp_path: Path, small_merges: None) -> None:
    rng = random.Random(3)
    live: dict[tuple[str, str], LexicalDoc] = {}
    index = _opened(tmp_path / "lex")
    _churn(index, live, rng, 100, "a")
    index.close()
    index = StoredBM25Index(tmp_path / "lex")
    assert index.load() == IndexState()
    assert not index._shards  # nothing read yet
    index.add([_doc(rng, "fresh", "bob")])  # a write to a namespace does not load it either
    assert not index._shards
    index.search("alice", "w1x", 3)
    assert set(index._shards) == {"alice"}
    index.close()


def test_close_merges_long_logs_so_a_reopened_namespace_replays_little(tmp_path: Path) -> None:
    rng = random.Random(4)
    index = _opened(tmp_path / "lex")
    index.add([_doc(rng, f"m{i}", "alice") for i in range(MERGE_ON_CLOSE + 10)])
    index.add([_doc(rng, f"s{i}", "bob") for i in range(5)])
    assert index.logged("alice") == MERGE_ON_CLOSE + 10 and index.logged("bob") == 5
    index.close()
    index = _opened(tmp_path / "lex")
    assert index.logged("alice") == 0 and index.logged("bob") == 5
    assert index.count("alice") == MERGE_ON_CLOSE + 10 and index.count("bob") == 5
    index.close()


def _one_namespace(tmp_path: Path, small_merges: None) -> tuple[Path, dict[tuple[str, str], LexicalDoc]]:
    rng = random.Random(5)
    live: dict[tuple[str, str], LexicalDoc] = {}
    index = _opened(tmp_path / "lex")
    batch = [_doc(rng, f"m{i}", ns) for ns in NAMESPACES for i in range(60)]
    index.add(batch)
    live.update({(d.namespace, d.memory_id): d for d in batch})
    index.close()
    return tmp_path / "lex", live


def _file_of(folder: Path, namespace: str) -> Path:
    with sqlite3.connect(folder / DB_NAME) as db:
        (name,) = db.execute("SELECT file FROM segment WHERE ns = ?", (namespace,)).fetchone()
    return folder / name


@pytest.mark.parametrize("damage", ["missing", "truncated"])
def test_a_missing_or_truncated_file_is_reported_and_rebuilt(tmp_path: Path, small_merges: None, damage: str) -> None:
    folder, live = _one_namespace(tmp_path, small_merges)
    path = _file_of(folder, "bob")
    if damage == "missing":
        path.unlink()
    else:
        path.write_bytes(path.read_bytes()[:-100])
    index = StoredBM25Index(folder)
    state = index.load()
    assert state.whole is None and set(state.namespaces) == {"bob"} and damage in state.namespaces["bob"]
    index.rebuild([d for (ns, _), d in live.items() if ns == "bob"], ["bob"])
    _same_rankings(index, live, random.Random(1))
    index.close()
    index = StoredBM25Index(folder)  # the rebuild was recorded: nothing to report next time
    assert index.load() == IndexState()
    index.close()


def test_a_rebuild_that_did_not_finish_is_reported_again(tmp_path: Path, small_merges: None) -> None:
    folder, live = _one_namespace(tmp_path, small_merges)
    _file_of(folder, "bob").unlink()
    index = StoredBM25Index(folder)
    assert set(index.load().namespaces) == {"bob"}
    index.close()  # the process died before rebuilding it
    index = StoredBM25Index(folder)
    assert set(index.load().namespaces) == {"bob"}  # still marked: never served empty
    index.close()


@pytest.mark.parametrize("change", ["format", "params", "tokenizer", "garbage", "missing", "unfinished"])
def test_files_of_another_version_or_unreadable_are_rebuilt_whole(tmp_path: Path, small_merges: None,
                                                                  change: str) -> None:
    folder, live = _one_namespace(tmp_path, small_merges)
    params: dict[str, object] = {}
    if change in ("format", "tokenizer", "unfinished"):
        with sqlite3.connect(folder / DB_NAME) as db:
            if change == "format":
                db.execute("UPDATE meta SET value = '0' WHERE key = 'format'")
            elif change == "tokenizer":
                (text,) = db.execute("SELECT value FROM meta WHERE key = 'params'").fetchone()
                db.execute("UPDATE meta SET value = ? WHERE key = 'params'",
                           (json.dumps({**json.loads(text), "tokenizer": "0000"}, sort_keys=True),))
            else:
                db.execute("UPDATE meta SET value = '0' WHERE key = 'complete'")
    elif change == "params":
        params = {"predicate_weight": 2}  # another weighting: the stored term frequencies are not this index's
    elif change == "garbage":
        for suffix in ("", "-wal", "-shm"):
            (folder / f"{DB_NAME}{suffix}").unlink(missing_ok=True)
        (folder / DB_NAME).write_bytes(b"this is not a database" * 100)
    else:
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()
    index = StoredBM25Index(folder, **params)  # type: ignore[arg-type]
    state = index.load()
    assert state.whole is not None
    index.rebuild(list(live.values()))
    if not params:
        _same_rankings(index, live, random.Random(2))
    assert len(list(folder.glob("*.seg"))) == len(NAMESPACES)  # the old files are gone
    index.close()
    again = StoredBM25Index(folder, **params)  # type: ignore[arg-type]
    assert again.load() == IndexState()
    again.close()


def test_a_damaged_file_found_on_first_use_is_refilled_and_logged(tmp_path: Path, small_merges: None,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    """Open checks only sizes; a header damaged in place is found when the namespace is loaded, and
    the index asks its refill for the namespace's documents rather than serve a wrong ranking."""
    folder, live = _one_namespace(tmp_path, small_merges)
    path = _file_of(folder, "carol")
    data = bytearray(path.read_bytes())
    data[:4] = b"XXXX"
    path.write_bytes(bytes(data))
    index = StoredBM25Index(folder)
    assert index.load() == IndexState()
    asked: list[str] = []

    def refill(namespace: str) -> list[LexicalDoc]:
        asked.append(namespace)
        return [d for (ns, _), d in live.items() if ns == namespace]

    index.set_refill(refill)
    with caplog.at_level(logging.WARNING, logger=stored_module.__name__):
        _same_rankings(index, live, random.Random(3))
    assert asked == ["carol"]
    assert caplog.text.count("rebuilding the lexical index of namespace 'carol'") == 1
    index.close()
    without = StoredBM25Index(folder)  # repaired on disk: loads without asking
    without.load()
    _same_rankings(without, live, random.Random(4))
    without.close()


def test_without_a_refill_a_damaged_file_is_an_error_not_a_ranking(tmp_path: Path, small_merges: None) -> None:
    folder, _live = _one_namespace(tmp_path, small_merges)
    path = _file_of(folder, "alice")
    data = bytearray(path.read_bytes())
    data[:4] = b"XXXX"
    path.write_bytes(bytes(data))
    index = StoredBM25Index(folder)
    index.load()
    with pytest.raises(BackendError, match="cannot be read"):
        index.search("alice", "w1x", 3)
    assert index.search("bob", "w1x", 3)  # the other namespaces still answer
    index.close()


def test_a_closed_index_refuses_and_a_new_one_starts_empty(tmp_path: Path) -> None:
    index = StoredBM25Index(tmp_path / "lex")
    index.add([LexicalDoc("a", "alice", "hello world", None, None)])  # first use of a new index: created
    assert index.count("alice") == 1
    index.close()
    with pytest.raises(StoreClosed):
        index.search("alice", "hello", 3)
    again = _opened(tmp_path / "lex")
    assert [m for m, _ in again.search("alice", "hello", 3)] == ["a"]
    again.close()


def _refill_from(live: dict[tuple[str, str], LexicalDoc], asked: list[str]) -> object:
    def refill(namespace: str) -> list[LexicalDoc]:
        asked.append(namespace)
        return [d for (ns, _), d in live.items() if ns == namespace]
    return refill


def _damage_section(path: Path, section: str) -> None:
    """Change bytes of one array in place: the file keeps its size and its header."""
    from fused_memory.backends.lexical.segment import MAGIC

    data = bytearray(path.read_bytes())
    n = int.from_bytes(data[len(MAGIC):len(MAGIC) + 8], "little")
    header = json.loads(data[len(MAGIC) + 8:len(MAGIC) + 8 + n])
    offset, dtype, count = header["sections"][section][:3]
    start = header["data"] + offset
    width = int(dtype[-1])
    assert count > 3
    data[start:start + 3 * width] = bytes(reversed(data[start:start + 3 * width])) if section == "post_doc" \
        else b"\x07" * (3 * width)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("section", ["post_tf", "post_doc", "doc_len", "type_code"])
def test_a_file_damaged_in_place_fails_its_checksum_and_is_refilled(
        tmp_path: Path, small_merges: None, section: str, caplog: pytest.LogCaptureFixture) -> None:
    """Same size, header intact, bytes of one array changed: served, it gave wrong rankings or an
    IndexError. Its checksum fails when the namespace is first mapped, and it is rebuilt."""
    folder, live = _one_namespace(tmp_path, small_merges)
    _damage_section(_file_of(folder, "bob"), section)
    index = StoredBM25Index(folder)
    assert index.load() == IndexState()  # open reads no postings: found on first use
    asked: list[str] = []
    index.set_refill(_refill_from(live, asked))  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING, logger=stored_module.__name__):
        _same_rankings(index, live, random.Random(6))
    assert asked == ["bob"]
    assert caplog.text.count(f"its {section} array fails its checksum") == 1
    index.close()


def test_a_changed_type_table_rebuilds_the_files(tmp_path: Path, small_merges: None,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """`type_code` numbers the memory types in the enum's order: under another order (a type added
    or moved) the stored codes would name other types, so the files are not this index's."""
    from fused_memory.backends.lexical.segment import SegmentError, load_segment

    folder, _live = _one_namespace(tmp_path, small_merges)
    written = StoredBM25Index(folder).params
    monkeypatch.setattr(stored_module, "TYPE_OF", (None, *reversed(stored_module.TYPE_OF[1:])))
    index = StoredBM25Index(folder)
    assert index.params.types != written.types and index.params.types[0] == written.types[-1]
    with pytest.raises(SegmentError, match="written with"):
        load_segment(_file_of(folder, "alice"), "alice", index.params)
    state = index.load()
    assert state.whole is not None and "types" in state.whole
    index.close()


def test_a_database_damaged_past_its_first_page_is_discarded_and_rebuilt_whole(
        tmp_path: Path, small_merges: None) -> None:
    """The schema and the meta read; the manifest's and the log's pages do not: `load` raised
    sqlite3.DatabaseError and the store did not open. The database cannot be trusted: the whole index is rebuilt."""
    folder, live = _one_namespace(tmp_path, small_merges)
    index = StoredBM25Index(folder)
    index.load()
    index.add([_doc(random.Random(9), f"late{i}", "alice") for i in range(10)])  # rows in the log
    index.close()
    with sqlite3.connect(folder / DB_NAME) as db:  # every page but the schema's and the meta's
        pages = [p for (p,) in db.execute("SELECT pageno FROM dbstat WHERE name NOT IN ('sqlite_schema', 'meta')")]
    damage_sqlite_pages(folder / DB_NAME, pages)
    index = StoredBM25Index(folder)
    state = index.load()
    assert state.whole is not None and "cannot be read" in state.whole
    index.rebuild(list(live.values()))
    _same_rankings(index, live, random.Random(7))
    index.close()
    again = StoredBM25Index(folder)
    assert again.load() == IndexState()
    again.close()


def test_a_damaged_log_found_on_first_use_rebuilds_the_index_not_a_crash(
        tmp_path: Path, small_merges: None, caplog: pytest.LogCaptureFixture) -> None:
    """`load` reads the log's index only; the log's own pages are read when a namespace is first
    used. Damaged there, the database is discarded and every namespace refilled, logged once."""
    folder, live = _one_namespace(tmp_path, small_merges)
    index = StoredBM25Index(folder)
    index.load()
    late = [_doc(random.Random(9), f"late{i}", ns) for ns in NAMESPACES for i in range(5)]
    index.add(late)
    live.update({(d.namespace, d.memory_id): d for d in late})
    index.close()
    with sqlite3.connect(folder / DB_NAME) as db:
        log_pages = [p for (p,) in db.execute("SELECT pageno FROM dbstat WHERE name = 'log'")]
    damage_sqlite_pages(folder / DB_NAME, log_pages)
    index = StoredBM25Index(folder)
    assert index.load() == IndexState()
    asked: list[str] = []
    index.set_refill(_refill_from(live, asked))  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING, logger=stored_module.__name__):
        _same_rankings(index, live, random.Random(8))
    assert sorted(asked) == sorted(NAMESPACES)
    assert len([r for r in caplog.records if r.name == stored_module.__name__]) == 1, caplog.text
    index.close()
    again = StoredBM25Index(folder)
    assert again.load() == IndexState()
    _same_rankings(again, live, random.Random(8))
    again.close()


def test_a_failing_merge_does_not_fail_the_write(tmp_path: Path, small_merges: None,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    """A merge only shortens later loads. The disk full while it writes the file (a fault injected
    in the segment writer): every write still succeeds and is kept in the log, the failure is
    logged once, and the merge is done at a later write once the disk has room again."""
    rng = random.Random(10)
    live: dict[tuple[str, str], LexicalDoc] = {}
    index = _opened(tmp_path / "lex")
    real = stored_module.write_segment

    def full(*args: object, **kwargs: object) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(stored_module, "write_segment", full)
    with caplog.at_level(logging.WARNING, logger=stored_module.__name__):
        for step in range(8):  # past the merge point, and past the retry point, of 'alice'
            batch = [_doc(rng, f"m{step}-{j}", "alice") for j in range(20)]
            index.add(batch)
            live.update({(d.namespace, d.memory_id): d for d in batch})
        index.delete("alice", ["m0-0"])
        live.pop(("alice", "m0-0"))
    assert caplog.text.count("not merged") == 1, caplog.text
    assert index.logged("alice") == 161 and not list((tmp_path / "lex").glob("*.seg"))
    _same_rankings(index, live, rng)
    monkeypatch.setattr(stored_module, "write_segment", real)
    batch = [_doc(rng, f"n{j}", "alice") for j in range(30)]  # room again: this write merges
    index.add(batch)
    live.update({(d.namespace, d.memory_id): d for d in batch})
    assert index.logged("alice") == 0 and list((tmp_path / "lex").glob("*.seg"))
    _same_rankings(index, live, rng)
    index.close()
    again = _opened(tmp_path / "lex")
    _same_rankings(again, live, rng)
    again.close()


def test_the_log_commits_with_synchronous_full(tmp_path: Path) -> None:
    """Durable before the store clears the write from its journal, even against an OS crash."""
    index = _opened(tmp_path / "lex")
    index.add([LexicalDoc("a", "alice", "hello world", None, None)])
    assert index._require().execute("PRAGMA synchronous").fetchone() == (2,)  # FULL
    index.close()
