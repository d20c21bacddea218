"""Seed data and queries shared by the adapter tests (imported by conftest and the test modules)."""

from __future__ import annotations

from datetime import timedelta

from fused_memory.demo import DEMO_NAMESPACE, DEMO_NOW
from fused_memory.types import Memory, MemoryType

__all__ = ["NS", "NOW", "OTHER_NS", "QUERY", "QUERIES", "ARMS_BY_CLASS", "OTHER_MEMORIES"]

NS = DEMO_NAMESPACE
NOW = DEMO_NOW
OTHER_NS = "bob"

#: Names every arm into play: an entity (graph), "last week" (temporal window), "did I" (event hint:
#: type arm), words (BM25) and meaning (dense). Each arm legitimately finds >= 3 memories for it.
QUERY = "what did I tell Sarah about the Berlin office last week?"

#: Queries of each kind the ensemble is built for (the demo's own), for parity checks.
QUERIES: tuple[str, ...] = (
    QUERY,
    "what's my badge ID?",
    "who reports to Sarah?",
    "what's my setting for the Kestrel project timeout?",
    "what did I do yesterday?",
    "how do I like my meeting notes?",
    "when did we fix JIRA-9921?",
)

ARMS_BY_CLASS: dict[str, str | None] = {
    "DenseMemoryRetriever": "dense",
    "BM25MemoryRetriever": "lexical",
    "GraphMemoryRetriever": "graph",
    "TemporalMemoryRetriever": "temporal",
    "TypeFilterMemoryRetriever": "type",
    "EnsembleMemoryRetriever": None,
}

OTHER_MEMORIES = [
    Memory(text="Bob's badge ID is B-11111.", namespace=OTHER_NS, type=MemoryType.FACT, id="bob-badge"),
    Memory(text="Bob prefers light mode.", namespace=OTHER_NS, type=MemoryType.PREFERENCE, id="bob-light"),
    Memory(text="Bob met Sarah in Berlin.", namespace=OTHER_NS, type=MemoryType.EVENT, id="bob-met",
           event_at=NOW - timedelta(days=2)),
]
