"""fused-memory: memory retrieval for AI agents.

Five retrievers (dense, BM25, entity graph, temporal, type) run in parallel over one memory store
and are fused by score-weighted RRF, with an explanation on every result. This package is
framework-free: the LangChain and LlamaIndex adapters live in their own import packages.
"""

from __future__ import annotations

from .config import FusionConfig, StoreConfig
from .conversation import conversation_context
from .ensemble import EnsembleMemory
from .errors import (BackendError, BackendUnavailable, ConfigurationError, EmbeddingMismatch, FusedMemoryError,
                     InvalidMemory, MissingDependency, NotPicklable, QueryError, StoreClosed)
from .retrievers.base import ArmRequest, Retriever
from .store.memory_store import MemoryStore
from .results import (ArmFailure, Contribution, EntityCandidate, EntityRef, FusedHit, Hit, ParsedQuery, QueryPlan,
                      Retrieval)
from .types import Memory, MemoryType, TimeWindow

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "MemoryStore", "EnsembleMemory",
    "Memory", "MemoryType", "TimeWindow", "EntityCandidate", "EntityRef", "ParsedQuery", "QueryPlan",
    "Hit", "Contribution", "FusedHit", "ArmFailure", "Retrieval",
    "FusionConfig", "StoreConfig",
    "FusedMemoryError", "ConfigurationError", "BackendError", "BackendUnavailable",
    "EmbeddingMismatch", "QueryError", "InvalidMemory", "MissingDependency", "StoreClosed", "NotPicklable",
    "ArmRequest", "Retriever", "conversation_context",
]
