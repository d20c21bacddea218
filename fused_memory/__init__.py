"""fused-memory: memory retrieval for AI agents.

Five retrievers (dense, BM25, entity graph, temporal, type) run in parallel over one memory store
and are fused by score-weighted RRF, with an explanation on every result. This package is
framework-free: the LangChain and LlamaIndex adapters live in their own import packages.

The public API is what `__all__` lists here, and the `__all__` of these public modules:
`fused_memory.embeddings` (embedders and framework embedding adapters), `fused_memory.rerank` (the
`Reranker` protocol and the framework reranker adapters), `fused_memory.backends`
(the backend protocols, to write a backend of your own), `fused_memory.adapters` (what the framework
adapters share), `fused_memory.evaluation` (eval and bench) and `fused_memory.demo` (the sample
memories). Every other module is internal and may move.
"""

from __future__ import annotations

from .config import FusionConfig, StoreConfig
from .conversation import conversation_context
from .ensemble import EnsembleMemory
from .errors import (
                     BackendError,
                     BackendUnavailable,
                     ConfigurationError,
                     EmbeddingMismatch,
                     FusedMemoryError,
                     InvalidMemory,
                     MissingDependency,
                     NotPicklable,
                     QueryError,
                     StoreClosed,
)
from .rerank import Reranker
from .results import (
                     ARMS,
                     Arm,
                     ArmFailure,
                     Contribution,
                     EntityCandidate,
                     EntityRef,
                     FusedHit,
                     Hit,
                     ParsedQuery,
                     QueryPlan,
                     Retrieval,
)
from .retrievers.base import ArmRequest, Retriever
from .retrievers.registry import BUILTIN_ARMS, ArmRegistry, ArmSpec
from .store import MemoryStore
from .types import Entity, EntityMention, Memory, MemoryType, Relation, TimeWindow

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "MemoryStore", "EnsembleMemory",
    "Memory", "MemoryType", "TimeWindow", "Entity", "EntityMention", "Relation",
    "EntityCandidate", "EntityRef", "ParsedQuery", "QueryPlan", "ARMS",
    "Hit", "Contribution", "FusedHit", "ArmFailure", "Retrieval",
    "FusionConfig", "StoreConfig",
    "FusedMemoryError", "ConfigurationError", "BackendError", "BackendUnavailable",
    "EmbeddingMismatch", "QueryError", "InvalidMemory", "MissingDependency", "StoreClosed", "NotPicklable",
    "ArmRequest", "Retriever", "Reranker", "conversation_context",
    "Arm", "ArmSpec", "ArmRegistry", "BUILTIN_ARMS",
]
