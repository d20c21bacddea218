"""Embedder pinning and on-disk layout.

A store records the embedder that wrote it (name, dim, weights hash) and its on-disk layout version
in `meta.json`. Opening it with another embedder raises `EmbeddingMismatch`; opening a store of
another layout is refused (no in-place migration exists yet) with a `ConfigurationError` that says
what to do: an older layout -> open it with the version that wrote it or re-ingest into a new store;
a newer one -> upgrade fused-memory; a damaged meta -> restore it or re-ingest. Every refusal
happens before any backend is opened, so the refused store is left byte-for-byte unchanged and
still opens with the right embedder; and the refusing process holds no lock on it.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

import numpy as np
import pytest

from fused_memory.backends.lexical.bm25 import BM25Index
from fused_memory.backends.protocols import VectorRecord
from fused_memory.backends.vector.edge import QdrantEdgeBackend
from fused_memory.embeddings import HashingEmbedder
from fused_memory.embeddings.base import EmbedderId
from fused_memory.ensemble import EnsembleMemory
from fused_memory.errors import BackendError, BackendUnavailable, ConfigurationError, EmbeddingMismatch
from fused_memory.query.parse import parse_query
from fused_memory.retrievers.base import ArmRequest
from fused_memory.store.memory_store import MemoryStore
from fused_memory.store.recovery import JOURNALED_LAYOUT
from fused_memory.types import Memory

from _support import NOW, counts, embedded

NS = "pin"


class RenamedHashing(HashingEmbedder):
    """Same dimension and the very same vectors, but another identity: still refused."""

    @property
    def id(self) -> EmbedderId:
        return EmbedderId(name="not-the-same-model", dim=self.dim, weights_hash="x" * 64)


class OtherWeights(HashingEmbedder):
    """Same name and dimension, other weights (a fine-tuned or re-quantized model)."""

    @property
    def id(self) -> EmbedderId:
        base = super().id
        return EmbedderId(name=base.name, dim=base.dim, weights_hash=base.weights_hash + "-tuned")


def digest(root: Path) -> dict[str, str]:
    """Every file under the store, hashed: a refused open must not change one byte."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def written(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    s = embedded(root, dim=64).open()
    s.add([Memory(text="badge ID is 47821", namespace=NS, id="m1", entities=("Badge",)),
           Memory(text="Sarah Chen leads Kestrel", namespace=NS, id="m2", entities=("Sarah Chen", "Kestrel"))])
    s.close()
    return root


def _reopens_fine(root: Path) -> None:
    s = embedded(root, dim=64).open()
    try:
        assert counts(s, NS) == (2, 2, 2)
        ens = EnsembleMemory(s)
        assert ens.retrieve("badge ID", namespace=NS, k=1, now=NOW).ids() == ["m1"]
        ens.close()
    finally:
        s.close()


@pytest.mark.parametrize("embedder", [HashingEmbedder(dim=128), RenamedHashing(dim=64), OtherWeights(dim=64)],
                         ids=["other-dim", "other-name", "other-weights"])
def test_another_embedder_is_refused(written: Path, embedder: HashingEmbedder) -> None:
    before = digest(written)
    other = MemoryStore.embedded(written, embedder=embedder, ner=False)
    with pytest.raises(EmbeddingMismatch, match="same embedder|re-ingest"):
        other.open()
    with pytest.raises(EmbeddingMismatch):  # and on first use, not only on an explicit open
        other.add(Memory(text="x", namespace=NS))
    with pytest.raises(EmbeddingMismatch):
        EnsembleMemory(other).retrieve("badge", namespace=NS)
    assert digest(written) == before
    _reopens_fine(written)  # the refusing store object holds no lock on the shard


def test_the_pin_holds_while_open(written: Path) -> None:
    """Vectors of another dimension never reach the shard, even past the open-time check."""
    s = embedded(written, dim=64).open()
    try:
        s.embedder = HashingEmbedder(dim=32)  # swapped under a live store
        with pytest.raises(EmbeddingMismatch):
            s.add(Memory(text="sneaky", namespace=NS, id="m3"))
        with pytest.raises(EmbeddingMismatch):
            s.retriever("dense").search(ArmRequest(parse_query("badge", now=NOW), NS, 5))
        s.embedder = HashingEmbedder(dim=64)
        assert counts(s, NS) == (2, 2, 2) and s.get_many(NS, ["m3"]) == []
    finally:
        s.close()


@pytest.mark.parametrize("layout, advice", [
    (0, "re-ingest"), (JOURNALED_LAYOUT + 1, "upgrade fused-memory"), ("1", "damaged"), (None, "damaged")])
def test_another_layout_is_refused_with_advice(written: Path, layout: object, advice: str) -> None:
    meta_path = written / "vectors" / "meta.json"
    meta = json.loads(meta_path.read_text())
    assert meta["layout"] == JOURNALED_LAYOUT and meta["embedder"]["dim"] == 64  # an embedded store keeps its journal
    meta["layout"] = layout
    meta_path.write_text(json.dumps(meta))
    before = digest(written)
    with pytest.raises(ConfigurationError) as info:
        embedded(written, dim=64).open()
    msg = str(info.value)
    assert advice in msg and "layout" in msg and "Nothing was changed" in msg, msg
    assert digest(written) == before
    meta["layout"] = JOURNALED_LAYOUT
    meta_path.write_text(json.dumps(meta))
    _reopens_fine(written)


def test_missing_or_corrupt_meta_is_refused(written: Path) -> None:
    meta_path = written / "vectors" / "meta.json"
    good = meta_path.read_text()
    meta_path.write_text("{not json")
    with pytest.raises(BackendError, match="not valid JSON"):
        embedded(written, dim=64).open()
    meta_path.unlink()  # the pin is gone: opening must not silently re-pin a store full of vectors
    with pytest.raises(ConfigurationError, match="meta .* is missing"):
        embedded(written, dim=64).open()
    assert not meta_path.exists()
    meta_path.write_text(good)
    _reopens_fine(written)


def test_a_second_open_of_the_same_path_is_refused(written: Path) -> None:
    first = embedded(written, dim=64).open()
    try:
        with pytest.raises(BackendError, match="already open"):
            embedded(written, dim=64).open()
        assert counts(first, NS) == (2, 2, 2)
    finally:
        first.close()
    _reopens_fine(written)


def test_pin_records_the_embedder_identity(written: Path) -> None:
    meta = json.loads((written / "vectors" / "meta.json").read_text())
    eid = HashingEmbedder(dim=64).id
    assert meta["embedder"] == {"name": eid.name, "dim": 64, "weights_hash": eid.weights_hash}
    assert np.isclose(np.linalg.norm(HashingEmbedder(dim=64).embed_query("badge")), 1.0)


def _as_older_versions_wrote_it(store: MemoryStore, ids: list[str]) -> None:
    """Rewrite the memories' payloads without `answers`, as fused-memory wrote them before 2026-11-22."""
    old = [{k: v for k, v in p.items() if k != "answers"} for p in store.vectors.get(NS, ids)]
    vectors = store.embedder.embed_documents([p["text"] for p in old])
    store.vectors.upsert([VectorRecord(p["memory_id"], NS, tuple(map(float, v)), p)
                          for p, v in zip(old, vectors, strict=True)])
    assert all("answers" not in p for p in store.vectors.get(NS, ids))


class RefusingPayloadWrites(QdrantEdgeBackend):
    def set_payload(self, namespace: str, memory_ids: object, payload: object) -> None:
        raise BackendUnavailable("disk full")


def test_memories_written_before_the_answers_tag_are_tagged_on_open(tmp_path: Path,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    """The temporal arm answers "when did...?" from the memories tagged as stating a time; a store
    written before the tag existed gave that arm nothing until re-ingested. Open derives the tag
    from the stored text, as ingest does; if the write fails the store still opens, serving as
    before, and the next open tries again."""
    root = tmp_path / "older"
    s = embedded(root).open()
    s.add([Memory(text="We moved the Kestrel launch to 3 June 2024", namespace=NS, id="dated"),
           Memory(text="Kestrel launch notes are in the shared drive", namespace=NS, id="undated")])
    _as_older_versions_wrote_it(s, ["dated", "undated"])
    s.close()

    def temporal_ids(store: MemoryStore) -> list[str]:
        ens = EnsembleMemory(store, optimizer=False)
        try:
            r = ens.retrieve("when did we move the Kestrel launch?", namespace=NS, k=5, now=NOW)
            return [h.memory.id for h in r.hits if any(c.arm == "temporal" for c in h.contributions)]
        finally:
            ens.close()

    refusing = MemoryStore(RefusingPayloadWrites(str(root / "vectors")), BM25Index(), HashingEmbedder(dim=64))
    with caplog.at_level(logging.WARNING, logger="fused_memory.store.memory_store"):
        refusing.open()
    try:
        assert "could not add the `answers` tag to some of 2 older memories" in caplog.text
        assert "BackendUnavailable: disk full" in caplog.text
        assert temporal_ids(refusing) == []  # as before: the arm cannot see them
    finally:
        refusing.close()

    s = embedded(root).open()
    try:
        assert {p["memory_id"]: p["answers"] for p in s.vectors.get(NS, ["dated", "undated"])} == {
            "dated": ["time"], "undated": []}
        assert temporal_ids(s) == ["dated"]
    finally:
        s.close()


@pytest.mark.slow  # a second process holds the store
def test_a_store_open_in_another_process_says_which_path_and_what_to_do(written: Path) -> None:
    """It said the engine's words ("Can't init WAL: Kind(WouldBlock)") about an inner shard path."""
    import subprocess
    import sys

    holder = subprocess.Popen([sys.executable, "-c", f"""
import sys, time
from fused_memory.embeddings import HashingEmbedder
from fused_memory.store.memory_store import MemoryStore
store = MemoryStore.embedded({str(written)!r}, embedder=HashingEmbedder(dim=64), ner=False).open()
print("open", flush=True)
sys.stdin.read()
"""], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        with pytest.raises(BackendError) as refused:
            embedded(written, dim=64).open()
        said = str(refused.value)
        assert said.startswith(f"the store at {written} is already open (by another process, or another MemoryStore")
        assert "close it there" in said and "MemoryStore.connect" in said and "WouldBlock" not in said
    finally:
        holder.communicate("", timeout=60)
    _reopens_fine(written)
