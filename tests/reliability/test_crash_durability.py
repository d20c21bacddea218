"""Crash durability: a child process ingests into an embedded store and is SIGKILLed, over and over.

What `add` guarantees (see `fused_memory.store.memory_store`): when it returns, the memory is in the
vector store (qdrant-edge, through its WAL), the lexical index (its log, a committed SQLite
transaction, and the postings files it merges into) and the graph (a committed SQLite transaction),
and it survives a crash of the process. A crash *during* an add or delete may leave the lexical
index and the graph behind the vector payloads (the source of truth); the write journal names the
memories of that write, and `MemoryStore.open` makes both agree with their payloads, so after a
restart the three indexes agree again. Not covered: an OS crash or power loss (no fsync per write).

The child (`_ingest_child.py`) logs every operation before it starts and after it returned, with
fsync, so after each kill the parent knows what must be there: every memory whose add returned is
present - with the text of its last completed write - in the vector store, the lexical index and the
graph; every memory whose delete returned is gone from all three; the one operation in flight may
have happened or not, but consistently; and the three indexes agree on counts per namespace. Half of
the children run real spaCy NER; the child sleeps a little inside the write path between the vector
write and the lexical and graph writes so kills land there often, and its lexical index merges its
log into new postings files every few writes, so kills land in those too. Four more tests kill the
child at exact points: before the graph link or unlink, before the lexical write, and inside a merge.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _ingest_child import NAMESPACES, replay

from fused_memory.store.memory_store import MemoryStore

from _support import counts, embedded, lexical_ids

CHILD = Path(__file__).with_name("_ingest_child.py")
LOGGER = "fused_memory.store.memory_store"
#: How many children the random-kill test kills: FUSED_MEMORY_KILLS, else a few for a quick local run
#: (CI sets 20 in .ci/run). Every fifth child, starting with the second, is killed at a random point
#: anywhere (start-up, open and reconcile, ingest), the others once they ingest; even ones run spaCy.
KILLS_VARIABLE, DEFAULT_KILLS = "FUSED_MEMORY_KILLS", 3


def kills() -> int:
    """FUSED_MEMORY_KILLS read and checked: a value that is not a count fails the test rather than
    running it with some other number of kills."""
    raw = os.environ.get(KILLS_VARIABLE, str(DEFAULT_KILLS))
    if not raw.strip().isdigit() or int(raw) < 1:
        pytest.fail(f"{KILLS_VARIABLE} must be a positive whole number of kills, got {raw!r}")
    return int(raw)


def _spawn(store: Path, log: Path, run: int, *extra: str) -> tuple[subprocess.Popen[bytes], Path]:
    err = log.with_name(f"child-{run}.err")
    env = {**os.environ, "PYTHONHASHSEED": str(run)}
    with open(err, "wb") as fh:
        proc = subprocess.Popen([sys.executable, str(CHILD), str(store), str(log), str(run), *extra],
                                stdout=subprocess.DEVNULL, stderr=fh, env=env)
    return proc, err


def _wait_ready(log: Path, run: int, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    marker = f'"s": "ready", "run": {run}}}'
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if log.exists() and marker in log.read_text(encoding="utf-8"):
            return
        if proc.poll() is not None:
            return
        time.sleep(0.02)
    raise AssertionError(f"child {run} did not start within {timeout}s")


def _reap(proc: subprocess.Popen[bytes], err: Path, timeout: float = 30.0) -> None:
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError("child did not die") from None
    assert proc.returncode == -signal.SIGKILL, f"child exited on its own ({proc.returncode}): {err.read_text()[-3000:]}"


def _canon(store: MemoryStore, ns: str, name: str) -> str | None:
    assert store.graph is not None
    found = store.graph.resolve(ns, name)
    return found[0].id if found else None


def verify(store: MemoryStore, log: Path) -> tuple[int, int]:
    """Every completed write is in all three indexes, every completed delete in none, the in-flight
    operation all-or-nothing, and per-namespace counts agree. Returns (memories, uncertain)."""
    assert store.graph is not None
    state, uncertain, _ = replay(log)
    stored = {(p["namespace"], p["memory_id"]): p for p in store.vectors.scroll()}
    want = {k: v for k, v in state.items() if v is not None and k not in uncertain}
    gone = {k for k, v in state.items() if v is None and k not in uncertain}
    in_flight_kept = {k for k in uncertain if k in stored}
    assert set(stored) == set(want) | in_flight_kept, (
        f"lost: {sorted(set(want) - set(stored))[:5]}, ghosts: {sorted(set(stored) - set(want) - uncertain)[:5]}")
    assert not gone & set(stored)
    for ns in NAMESPACES:
        v, lex, g = counts(store, ns)
        assert v == lex == g, f"{ns}: vectors {v}, lexical {lex}, graph {g}"
    for (ns, mid), p in stored.items():
        item = want.get((ns, mid))
        if item is not None:
            assert p["text"] == item["text"], (ns, mid)
        token = p["text"].rsplit(" ", 1)[-1]
        assert lexical_ids(store, ns, token, 3)[:1] == [mid], (ns, mid, token)
        linked = store.graph.mentions_of(ns, mid)
        assert linked, f"{ns}/{mid} is not linked in the graph"
        assert {_canon(store, ns, t) for t in linked} == {_canon(store, ns, e) for e in p["entities"]}, (ns, mid)
    for ns, mid in gone | (uncertain - set(stored)):
        assert store.graph.mentions_of(ns, mid) == [] and mid not in lexical_ids(store, ns, mid, 50)
    return len(stored), len(uncertain)


@pytest.mark.slow  # a kill loop: FUSED_MEMORY_KILLS children, each spawned, killed and verified
def test_sigkill_at_random_points_loses_nothing(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    seed = int(os.environ.get("FM_CRASH_SEED", time.time_ns() % 1_000_000))
    rng = random.Random(seed)
    store_dir, log = tmp_path / "store", tmp_path / "ops.jsonl"
    caplog.set_level("WARNING", logger=LOGGER)
    repaired, ingesting = 0, 0.0
    count = kills()
    t0 = time.perf_counter()
    for run in range(count):
        proc, err = _spawn(store_dir, log, run, *(["--ner"] if run % 2 == 0 else []))
        if run % 5 == 2:
            time.sleep(rng.uniform(0.0, 0.6))  # anywhere: start-up, open + reconcile, or ingest
        else:
            _wait_ready(log, run, proc)
            given = rng.uniform(0.05, 0.5)
            time.sleep(given)
            ingesting += given
        proc.send_signal(signal.SIGKILL)
        _reap(proc, err)
        caplog.clear()
        store = embedded(store_dir).open()
        try:
            memories, uncertain = verify(store, log)
        finally:
            store.close()
        repaired += "cut short" in caplog.text
    state, _, done = replay(log)
    took = time.perf_counter() - t0
    print(f"\n{count} SIGKILLs (seed {seed}): {done} operations completed in {ingesting:.2f}s of ingest, "
          f"{memories} memories kept, {repaired} restarts repaired a write cut short, {took:.1f}s")
    # the work scales with the seconds the children were left to ingest (~150 operations a second on
    # an idle 2-core host, fewer with spaCy): a floor well under that says they did real work
    assert done >= 20 * ingesting, "the children should have done real work between kills"
    with_kinds = embedded(store_dir).open()
    try:
        kinds = {k for p in with_kinds.vectors.scroll() for k in p.get("entity_kinds") or () if k}
    finally:
        with_kinds.close()
    assert kinds, "NER children should have recorded entity kinds (PERSON, GPE...)"


@pytest.mark.parametrize("point", ["link:1", pytest.param("unlink:1", marks=pytest.mark.slow),  # two children
                                   "lexical:1", "merge:1"])
def test_kill_between_the_vector_and_graph_writes_is_repaired(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                               point: str) -> None:
    """Killed after the vector write and before the graph write (link, unlink), before the lexical
    write too (lexical), or inside a lexical merge, between the new postings file and the index
    pointing at it (merge): the next open repairs exactly the memories of the write cut short,
    without reading the others, and a merge's orphaned file is deleted."""
    store_dir, log = tmp_path / "store", tmp_path / "ops.jsonl"
    if point.startswith("unlink"):  # give the child something to delete
        proc, err = _spawn(store_dir, log, 0)
        _wait_ready(log, 0, proc)
        time.sleep(0.3)
        proc.send_signal(signal.SIGKILL)
        _reap(proc, err)
    proc, err = _spawn(store_dir, log, 1, "--crash-at", point)
    _reap(proc, err)  # it kills itself right before the graph write
    last = json.loads(log.read_text(encoding="utf-8").splitlines()[-1])
    assert last["s"] == "begin", "the crash must have interrupted an operation"
    in_flight = {(i["ns"], i["id"]) for i in last["items"]}
    assert in_flight <= replay(log)[1]
    deleting = last["op"] == "del"  # unlink: always; merge: whichever write filled the log
    graph = "0 re-linked, 1 unlinked" if deleting else f"{len(in_flight)} re-linked, 0 unlinked"
    repair = f"repaired the indexes of {len(in_flight)} memories whose write was cut short (graph: {graph})"
    files_before = sorted(p.name for p in (store_dir / "lexical").glob("*.seg"))
    caplog.set_level("WARNING", logger=LOGGER)
    store = embedded(store_dir).open()
    try:
        assert repair in caplog.text, caplog.text
        assert "reading every memory" not in caplog.text and "graph reconciled" not in caplog.text
        verify(store, log)
        stored = {(p["namespace"], p["memory_id"]) for p in store.vectors.scroll()}
        if deleting:
            assert not in_flight & stored  # the delete had reached the vectors: it is complete now
        else:
            assert in_flight <= stored  # the vector write had happened: the add is complete now
        if point.startswith("merge"):  # the file the merge wrote before the kill is not the index's
            kept = {p.name for p in (store_dir / "lexical").glob("*.seg")}
            assert len(files_before) > len(kept) or set(files_before) != kept
    finally:
        store.close()
    caplog.clear()
    again = embedded(store_dir).open()  # a second open finds nothing left to repair
    try:
        assert "cut short" not in caplog.text and "reading every memory" not in caplog.text
    finally:
        again.close()
