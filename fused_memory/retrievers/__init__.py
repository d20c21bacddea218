"""The five arms. Each implements the one `Retriever` protocol in `base.py` and reads through the
source protocols there (`VectorSource`, `LexicalSource`, `GraphSearch`), never a store class; the
registry (`registry.py`) says how each is built, weighed and planned."""

from __future__ import annotations

from .base import ArmRequest, GraphSearch, LexicalSource, MemorySource, Retriever, VectorSource, dedupe_hits
from .graph import GraphRetriever
from .lexical import LexicalRetriever
from .registry import BUILTIN_ARMS, ArmRegistry, ArmSpec
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
           "ScopedGraphRetriever", "dedupe_hits", "run_vector_arms", "make_retriever", "ArmSpec", "ArmRegistry",
           "BUILTIN_ARMS"]


def make_retriever(source: MemorySource, name: str, registry: ArmRegistry = BUILTIN_ARMS) -> Retriever:
    """The arm called `name` ("dense", "lexical", "graph", "temporal", "type", or one `registry`
    adds) over `source`; `ConfigurationError` for a name it does not know."""
    return registry.make(name, source)
