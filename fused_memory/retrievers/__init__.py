"""The five arms. Each implements the one `Retriever` protocol in `base.py`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ConfigurationError
from ..results import ARMS
from .base import ArmRequest, Retriever, dedupe_hits
from .lexical import LexicalRetriever
from .vector import DenseRetriever, TemporalRetriever, TypeFilterRetriever, VectorArm, run_vector_arms

if TYPE_CHECKING:
    from ..store.memory_store import MemoryStore

__all__ = ["ArmRequest", "Retriever", "VectorArm", "DenseRetriever", "LexicalRetriever", "TemporalRetriever",
           "TypeFilterRetriever", "dedupe_hits", "run_vector_arms", "make_retriever"]


#: The arms built directly over a MemoryStore (the graph arm is built over its graph backend).
_STORE_ARMS = {"dense": DenseRetriever, "lexical": LexicalRetriever, "temporal": TemporalRetriever,
               "type": TypeFilterRetriever}


def make_retriever(store: MemoryStore, name: str) -> Retriever:
    """The arm called `name` over `store`."""
    if name == "graph":
        if store.graph is None:
            raise ConfigurationError("this store has no graph backend")
        from .graph import GraphRetriever
        return GraphRetriever(store.graph, ready=store._ensure_open)
    if name not in _STORE_ARMS:
        raise ConfigurationError(f"unknown retriever {name!r}; choose one of {', '.join(ARMS)}")
    return _STORE_ARMS[name](store)
