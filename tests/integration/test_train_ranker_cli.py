"""`fused-memory train-ranker` as a user runs it (the installed console script, the real default
embedder) on a tiny labelled set in the eval JSONL format: the file it writes loads and orders an
ensemble; bad input is a clear error before anything is ingested."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from helpers import fused_memory_cli

from fused_memory.config import FusionConfig
from fused_memory.embeddings import HashingEmbedder
from fused_memory.ensemble import EnsembleMemory
from fused_memory.ranking import FEATURE_NAMES, FEATURE_VERSION, load_ranker
from fused_memory.store.memory_store import MemoryStore
from fused_memory.types import Memory
from tests.integration.test_eval_cli import MEMORIES, QUERIES, _run

pytestmark = pytest.mark.slow


@pytest.fixture
def labelled(tmp_path: Path) -> tuple[Path, Path]:
    mem, qry = tmp_path / "memories.jsonl", tmp_path / "queries.jsonl"
    mem.write_text("\n".join(json.dumps({"id": i, "conversation_id": c, "session_id": s, "speaker": sp, "text": t,
                                         "event_at": at}) for i, c, s, sp, t, at in MEMORIES) + "\n")
    qry.write_text("\n".join(json.dumps({"id": i, "conversation_id": c, "question": q, "category": cat,
                                         "gold_ids": g, "now": now}) for i, c, q, cat, g, now in QUERIES) + "\n")
    return mem, qry


def test_train_ranker_writes_a_ranker_the_ensemble_loads(labelled, tmp_path: Path) -> None:
    mem, qry = labelled
    out = tmp_path / "mine.json"
    proc = _run("train-ranker", "--memories", str(mem), "--queries", str(qry), "--out", str(out), "--c", "0.5")
    assert f"wrote {out}" in proc.stderr and "7 queries" in proc.stderr  # the one without gold is not asked
    doc = json.loads(out.read_text())
    assert doc["feature_version"] == FEATURE_VERSION and doc["family"] == "linear"
    assert doc["features"] == list(FEATURE_NAMES) and doc["meta"]["c"] == 0.5 and doc["meta"]["n_queries"] == 7
    ranker = load_ranker(out)
    assert np.any(ranker.weights != 0)
    store = MemoryStore.embedded(tmp_path / "store", embedder=HashingEmbedder(dim=64), ner=False).open()
    try:
        store.add([Memory(text="Bob adopted a puppy named Biscuit", namespace="n", id="dog"),
                   Memory(text="Alice prefers dark mode", namespace="n", id="theme")])
        result = EnsembleMemory(store, FusionConfig(ranker=str(out))).retrieve("Bob's puppy", namespace="n")
        assert result.hits[0].memory.id == "dog" and result.hits[0].learned is not None
    finally:
        store.close()


def test_train_ranker_refuses_to_write_over_its_input(labelled) -> None:
    mem, qry = labelled
    proc = subprocess.run([*fused_memory_cli(), "train-ranker", "--memories", str(mem), "--queries", str(qry),
                           "--out", str(qry)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "--out" in proc.stderr and "is also --queries" in proc.stderr
    assert json.loads(qry.read_text().splitlines()[0])["id"] == "qa1"  # untouched
