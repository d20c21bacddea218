"""Use a LangChain `BaseDocumentCompressor` or a LlamaIndex `BaseNodePostprocessor` as a `Reranker`.

Why duck typing and no framework import: `import fused_memory` must stay framework-free, as for the
embedder adapters (`fused_memory.embeddings.adapters`). The wrappers build the framework's own
`Document` / `NodeWithScore` objects from the classes the framework has already loaded (a caller who
holds a compressor or a postprocessor has loaded them), call `compress_documents` /
`postprocess_nodes`, and read the answer back into one score per text.

Reading the answer back: each text goes in tagged with its position (a `Document` metadata key, a
node id), so the wrapper finds it in the answer whatever copies the framework made. A returned item's
score is the framework's own when every returned item has one (`relevance_score` in a Document's
metadata, as CohereRerank and FlashrankRerank write it; `NodeWithScore.score`, as
SentenceTransformerRerank and LLMRerank set it); otherwise its place in the answer (the first of
m returned scores 1, the last 1/m), as for CrossEncoderReranker, which returns the documents sorted
but without scores. Texts the reranker left out (its `top_n`) score below every returned one: with
framework scores, the lowest returned minus 1; with places, 0. An item that is not one of the texts
given, one returned twice, or a score that is not a finite number (NaN) is an error (the ensemble
then keeps the fused order): a reranker that invents documents is not one whose order can be trusted.
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Sequence
from typing import Any

from ..errors import BackendError, ConfigurationError
from .base import Reranker

__all__ = ["LangChainReranker", "LlamaIndexReranker", "as_reranker", "reranker_name"]

#: The Document metadata key that carries a text's position through a LangChain compressor.
POSITION_KEY = "fused_memory_position"
_NODE_PREFIX = "fused-memory-rerank-"

_LC_MODULE, _LC_CLASS = "langchain_core.documents.compressor", "BaseDocumentCompressor"
_LI_MODULE, _LI_CLASS = "llama_index.core.postprocessor.types", "BaseNodePostprocessor"


def _loaded_class(module: str, name: str) -> Any:
    """A framework class, only if its module is already loaded: an instance of it cannot exist
    otherwise, and this package must never import a framework itself."""
    mod = sys.modules.get(module)
    cls = getattr(mod, name, None) if mod is not None else None
    return cls if isinstance(cls, type) else None


def _instance_of(obj: object, module: str, name: str) -> bool:
    cls = _loaded_class(module, name)
    return cls is not None and isinstance(obj, cls)


def _scores(order: list[tuple[int, float | None]], n: int, name: str) -> list[float]:
    """One score per text from the answer: (position, framework score or None) per returned item,
    best first. See the module docstring for the rule; an item returned twice or a score that is
    not a finite number is garbage (`BackendError`)."""
    seen: dict[int, float | None] = {}
    for pos, score in order:
        if pos in seen:
            raise BackendError(f"{name} returned document {pos} twice")
        if score is not None and not math.isfinite(score):
            raise BackendError(f"{name} returned the score {score} for document {pos}, not a finite number")
        seen[pos] = score
    own = [s for s in seen.values() if s is not None]
    if seen and len(own) == len(seen):
        floor = min(own) - 1.0
        return [float(seen[i]) if i in seen else floor for i in range(n)]  # type: ignore[arg-type]
    m = len(seen)
    places = {pos: (m - j) / m for j, pos in enumerate(seen)}
    return [places.get(i, 0.0) for i in range(n)]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    return float(value)


class _FrameworkReranker:
    """What both wrappers share: the wrapped object, a name for explanations and failures."""

    _framework = "wrapped"
    _module, _class = "", ""

    def __init__(self, model: Any, name: str | None = None) -> None:
        if not _instance_of(model, self._module, self._class):
            raise ConfigurationError(f"{type(self).__name__} wraps a {self._class}; got {type(model).__name__}")
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise ConfigurationError("name must be a non-empty string")
        self.model = model
        self.name = name or f"{self._framework}:{type(model).__name__}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    def _position(self, value: Any, n: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < n:
            raise BackendError(f"{self.name} returned a document it was not given")
        return value


class LangChainReranker(_FrameworkReranker):
    """Wraps a `langchain_core` `BaseDocumentCompressor` (CohereRerank, CrossEncoderReranker,
    FlashrankRerank, LLMListwiseRerank...): `compress_documents(documents, query)`."""

    _framework = "langchain"
    _module, _class = _LC_MODULE, _LC_CLASS

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        document = _loaded_class("langchain_core.documents", "Document")
        if document is None:  # cannot happen while a compressor exists; said plainly if it does
            raise BackendError("langchain_core.documents is not loaded")
        docs = [document(page_content=t, metadata={POSITION_KEY: i}) for i, t in enumerate(texts)]
        answer = self.model.compress_documents(docs, query)
        order: list[tuple[int, float | None]] = []
        for d in answer or ():
            metadata = d.metadata if isinstance(d, document) else None
            if not isinstance(metadata, dict):
                raise BackendError(f"{self.name} returned {type(d).__name__}, not a Document")
            order.append((self._position(metadata.get(POSITION_KEY), len(texts)),
                          _number(metadata.get("relevance_score"))))
        return _scores(order, len(texts), self.name)


class LlamaIndexReranker(_FrameworkReranker):
    """Wraps a `llama_index.core` `BaseNodePostprocessor` (SentenceTransformerRerank, LLMRerank,
    CohereRerank, FlagEmbeddingReranker...): `postprocess_nodes(nodes, query_str=query)`."""

    _framework = "llamaindex"
    _module, _class = _LI_MODULE, _LI_CLASS

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        node_with_score = _loaded_class("llama_index.core.schema", "NodeWithScore")
        text_node = _loaded_class("llama_index.core.schema", "TextNode")
        if node_with_score is None or text_node is None:
            raise BackendError("llama_index.core.schema is not loaded")
        nodes = [node_with_score(node=text_node(text=t, id_=f"{_NODE_PREFIX}{i}"), score=None)
                 for i, t in enumerate(texts)]
        answer = self.model.postprocess_nodes(nodes, query_str=query)
        order: list[tuple[int, float | None]] = []
        for n in answer or ():
            if not isinstance(n, node_with_score):
                raise BackendError(f"{self.name} returned {type(n).__name__}, not a NodeWithScore")
            node_id = n.node.node_id
            tail = node_id[len(_NODE_PREFIX):] if node_id.startswith(_NODE_PREFIX) else ""
            order.append((self._position(int(tail) if tail.isdigit() else None, len(texts)), _number(n.score)))
        return _scores(order, len(texts), self.name)


def as_reranker(obj: object) -> Reranker:
    """Return `obj` as a `Reranker`: a LangChain `BaseDocumentCompressor` or a LlamaIndex
    `BaseNodePostprocessor` wrapped, anything with `rerank(query, texts)` as is. The framework
    classes are tried first: LangChain's `CohereRerank` also has a method named `rerank`, with
    another signature. Anything else is a `ConfigurationError`."""
    if _instance_of(obj, _LC_MODULE, _LC_CLASS):
        return LangChainReranker(obj)
    if _instance_of(obj, _LI_MODULE, _LI_CLASS):
        return LlamaIndexReranker(obj)
    if isinstance(obj, Reranker):
        return obj
    raise ConfigurationError(
        f"cannot use {type(obj).__name__} as a reranker: expected an object with rerank(query, texts) -> scores, "
        "a LangChain BaseDocumentCompressor or a LlamaIndex BaseNodePostprocessor")


def reranker_name(reranker: Reranker) -> str:
    """How explanations and failures name a reranker: a wrapper by what it wraps, any other by its type."""
    if isinstance(reranker, _FrameworkReranker):
        return reranker.name
    return type(reranker).__name__
