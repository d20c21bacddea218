"""The five arms. Each implements the one `Retriever` protocol in `base.py` and reads through the
source protocols there (`VectorSource`, `LexicalSource`, `GraphSearch`), never a store class."""

from __future__ import annotations

from ..errors import ConfigurationError
from ..results import ARMS
from .base import ArmRequest, GraphSearch, LexicalSource, MemorySource, Retriever, VectorSource, dedupe_hits
from .graph import GraphRetriever
from .lexical import LexicalRetriever
from .vector import (
    DenseRetriever,
    ScopedGraphRetriever,
    TemporalRetriever,
    TypeFilterRetriever,
    VectorArm,
    run_vector_arms,
)

__all__ = ["ArmRequest", "Retriever", "VectorArm", "VectorSource", "LexicalSource", "GraphSearch", "MemorySource",
           "DenseRetriever", "LexicalRetriever", "GraphRetriever", "TemporalRetriever", "TypeFilterRetriever",
           "ScopedGraphRetriever", "dedupe_hits", "run_vector_arms", "make_retriever"]


def make_retriever(source: MemorySource, name: str) -> Retriever:
    """The arm called `name` ("dense", "lexical", "graph", "temporal" or "type") over `source`."""
    if name == "graph":
        if source.graph is None:
            raise ConfigurationError("this store has no graph backend")
        return GraphRetriever(source)
    if name == "lexical":
        return LexicalRetriever(source)
    vector_arms = {"dense": DenseRetriever, "temporal": TemporalRetriever, "type": TypeFilterRetriever}
    if name not in vector_arms:
        raise ConfigurationError(f"unknown retriever {name!r}; choose one of {', '.join(ARMS)}")
    return vector_arms[name](source)
