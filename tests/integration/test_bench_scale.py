"""`fused-memory bench --embedder hashing` / `--vectors FILE.npy`, the scale mode, as a user runs it
(the installed console script) at a tiny n: it runs, keeps and reuses its store, its JSON has the
open / first-query / RSS / disk fields and says plainly when the hashing embedder made the vectors,
and bad input (a vectors file of the wrong shape or from another corpus, flags of the other mode) is
refused with a message naming what is wrong. Speed is measured by the bench itself, never asserted."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from helpers import fused_memory_cli

from fused_memory.embeddings import HashingEmbedder
from fused_memory.errors import ConfigurationError
from fused_memory.evaluation.scale import SCALE_ONLY_NOTE, PrecomputedEmbedder, ScaleSpec, load_vectors

SCALE_FIELDS = ("build_s", "open_s", "first_query_ms", "first_query_new_namespace_ms", "rss_mb", "rss_after_open_mb",
                "rss_over_models_mb", "kb_per_memory", "disk_mb", "disk_kb_per_memory", "open_plus_first_query_s")


def _run(*args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*fused_memory_cli(), *args], capture_output=True, text=True, timeout=300)
    if ok:
        assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def test_hashing_scale_mode_reports_its_fields_and_label_and_reuses_its_store(tmp_path: Path) -> None:
    args = ("bench", "--n", "300", "--embedder", "hashing", "--namespaces", "2", "--queries", "8",
            "--store", str(tmp_path / "kept"))
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    proc = _run(*args, "--json", str(first))
    assert proc.stdout.startswith(SCALE_ONLY_NOTE)  # the table's first line says what the numbers are
    assert "open s" in proc.stdout and "each plan / dense alone" in proc.stdout
    r = json.loads(first.read_text())["300"]
    assert r["note"] == SCALE_ONLY_NOTE and r["scale_only"] is True and r["embedder"] == "hashing"
    assert r["ner"] is False and r["namespaces"] == 2 and r["queried_namespace_n"] == 150
    for key in SCALE_FIELDS:
        assert isinstance(r[key], (int, float)) and r[key] > 0, key
    assert r["ingest_reused"] is False and r["n_queries"] == 8
    assert {"ensemble", "dense"} <= set(r["p50_ms"]) and r["p99_ms"]["ensemble"] >= r["p50_ms"]["ensemble"]
    # each plan against dense alone on the same queries: every timed query in exactly one plan
    plans = r["vs_dense_by_plan"]
    assert sum(p["n"] for p in plans.values()) == 8
    assert all(p["p50_ratio"] > 0 and p["p99_ratio"] > 0 for p in plans.values())
    # the kept store is reused: no build the second time (the first's numbers, as it recorded them),
    # the measurements again
    _run(*args, "--json", str(second))
    again = json.loads(second.read_text())["300"]
    assert again["ingest_reused"] is True and again["open_s"] > 0
    assert (again["build_s"], again["built_at"]) == (r["build_s"], r["built_at"])
    kept = tmp_path / "kept" / "n300-seed7-bm25-hashing-ns2-noner"
    assert (kept / "bench-build.json").is_file()
    # another size's store under this size's name is refused, not measured or added to: found by
    # counting when its record says so, and by the measuring process's count when the record lies
    other = tmp_path / "kept" / "n400-seed7-bm25-hashing-ns2-noner"
    shutil.copytree(kept, other)
    proc = _run("bench", "--n", "400", "--embedder", "hashing", "--namespaces", "2", "--queries", "8",
                "--store", str(tmp_path / "kept"), ok=False)
    assert proc.returncode == 2 and "holds 2 namespaces and 300 memories, not this size's 2 and 400" in proc.stderr
    record = json.loads((other / "bench-build.json").read_text())
    (other / "bench-build.json").write_text(json.dumps({**record, "namespaces": {"bench": 200, "bench-1": 200}}))
    proc = _run("bench", "--n", "400", "--embedder", "hashing", "--namespaces", "2", "--queries", "8",
                "--store", str(tmp_path / "kept"), ok=False)
    assert proc.returncode == 2 and "holds 2 namespaces and 300 memories, not this size's 2 and 400" in proc.stderr


def test_scale_mode_refuses_bad_input_with_a_message(tmp_path: Path) -> None:
    thin = tmp_path / "thin.npy"
    np.save(thin, np.zeros((300, 5), dtype=np.float32))
    proc = _run("bench", "--n", "300", "--vectors", str(thin), ok=False)
    assert proc.returncode == 2 and "has 5-dimensional rows" in proc.stderr and "makes 384" in proc.stderr
    short = tmp_path / "short.npy"
    np.save(short, np.zeros((10, 384), dtype=np.float32))
    proc = _run("bench", "--n", "300", "--vectors", str(short), ok=False)
    assert proc.returncode == 2 and "has 10 rows; the bench needs 300" in proc.stderr
    proc = _run("bench", "--n", "300", "--no-ner", ok=False)  # a scale flag without the scale mode
    assert proc.returncode == 2 and "scale mode" in proc.stderr
    proc = _run("bench", "--n", "300", "--embedder", "hashing", "--vectors", str(short), ok=False)
    assert proc.returncode == 2 and "not both" in proc.stderr
    proc = _run("bench", "--n", "10", "--embedder", "hashing", "--namespaces", "20", ok=False)
    assert proc.returncode == 2 and "--namespaces 20 needs at least 20 memories" in proc.stderr


def test_load_vectors_refuses_what_is_not_a_table_of_these_memories(tmp_path: Path) -> None:
    base = HashingEmbedder(16)
    text = tmp_path / "v.npy"
    text.write_text("not numpy")
    with pytest.raises(ConfigurationError, match="not a .npy array file"):
        load_vectors(str(text), 20, seed=7, base=base)
    with pytest.raises(ConfigurationError, match="cannot be read"):
        load_vectors(str(tmp_path / "missing.npy"), 20, seed=7, base=base)
    flat = tmp_path / "flat.npy"
    np.save(flat, np.zeros(20, dtype=np.float32))
    with pytest.raises(ConfigurationError, match="want a 2-d float array"):
        load_vectors(str(flat), 20, seed=7, base=base)
    wrong = tmp_path / "wrong.npy"  # the right shape, rows of another corpus
    np.save(wrong, np.random.default_rng(0).standard_normal((20, 16)).astype(np.float32))
    with pytest.raises(ConfigurationError, match="row 0 is not the embedding of synthetic memory 0"):
        load_vectors(str(wrong), 20, seed=7, base=base)


def test_a_table_made_by_its_embedder_loads_and_serves_documents_only(tmp_path: Path) -> None:
    from fused_memory.evaluation.scale import write_synth_vectors
    from fused_memory.evaluation.synth import synth_memories
    from fused_memory.store.memory_store import MemoryStore

    base = HashingEmbedder(16)
    path = write_synth_vectors(str(tmp_path / "v"), 40, seed=7, embedder=base)
    assert path.endswith("v.npy") and not list(tmp_path.glob("*.partial*"))
    table = load_vectors(path, 30, seed=7, base=base)  # a larger file serves a smaller n
    assert table.shape == (30, 16)
    memories = synth_memories(30, seed=7)
    emb = PrecomputedEmbedder(base, {MemoryStore.embed_text(m): i for i, m in enumerate(memories)}, table)
    assert emb.id == base.id and emb.dim == 16
    texts = [MemoryStore.embed_text(m) for m in memories[3:6]]
    assert np.allclose(emb.embed_documents(texts), base.embed_documents(texts), atol=1e-6)
    with pytest.raises(ConfigurationError, match="no precomputed vector"):
        emb.embed_documents(["a text no memory has"])


def test_scale_spec_refuses_what_it_cannot_build() -> None:
    with pytest.raises(ConfigurationError, match="one of hashing, vectors"):
        ScaleSpec(embedder="minilm")
    with pytest.raises(ConfigurationError, match="vectors file goes with"):
        ScaleSpec(embedder="hashing", vectors="v.npy")
    with pytest.raises(ConfigurationError, match="positive integer"):
        ScaleSpec(namespaces=0)
    assert ScaleSpec().note == SCALE_ONLY_NOTE
    assert SCALE_ONLY_NOTE not in ScaleSpec(embedder="vectors", vectors="v.npy").note


@pytest.mark.slow
def test_vectors_mode_end_to_end_with_the_default_embedder(tmp_path: Path) -> None:
    """--write-vectors then --vectors (with --ner): documents from the file, queries through the
    real model, and the output does not call the rankings meaningless."""
    vec = tmp_path / "v.npy"
    _run("bench", "--n", "200", "--write-vectors", str(vec), "--quiet")
    out = tmp_path / "r.json"
    proc = _run("bench", "--n", "200", "--vectors", str(vec), "--ner", "--queries", "8", "--json", str(out))
    assert SCALE_ONLY_NOTE not in proc.stdout
    r = json.loads(out.read_text())["200"]
    assert r["scale_only"] is False and r["embedder"] == "vectors" and r["embedder_load_s"] > 0
    assert r["ner"] is True  # asked for: spaCy ran at ingest
    assert r["first_query_new_namespace_ms"] is None  # one namespace: no other one to start
    assert r["open_s"] > 0 and r["rss_mb"] > 0 and r["p50_ms"]["ensemble"] > 0
