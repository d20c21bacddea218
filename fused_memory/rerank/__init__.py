"""Rerankers: a second opinion on the fused top of a retrieval, behind one small `Reranker` protocol.

`EnsembleMemory(reranker=...)` (or `retrieve(..., reranker=...)`) hands the texts of the fused top
`FusionConfig.rerank_depth` to a reranker and orders them by its scores, or by a blend of its ranks
and the fused ones (`FusionConfig.rerank_blend`). It runs under its own timeout with the arms' fault
isolation: a reranker that raises, hangs or answers garbage leaves the fused order, named in
`Retrieval.failures` as "rerank".

`LangChainReranker` (any `BaseDocumentCompressor`: CohereRerank, CrossEncoderReranker,
FlashrankRerank...) and `LlamaIndexReranker` (any `BaseNodePostprocessor`: SentenceTransformerRerank,
LLMRerank, CohereRerank...) bring a framework's reranker, without this package importing either
framework; `as_reranker` picks the wrapper.
"""

from __future__ import annotations

from .adapters import LangChainReranker, LlamaIndexReranker, as_reranker, reranker_name
from .base import Reranker, check_scores

__all__ = ["Reranker", "LangChainReranker", "LlamaIndexReranker", "as_reranker", "check_scores", "reranker_name"]
