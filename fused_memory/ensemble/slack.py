"""What an arm's thread does while the query embedding runs: read ahead for hydration.

onnxruntime releases the GIL while it embeds the query (~2.5 ms of a 100k query's ~8), and BM25 and
the graph, run beside it, usually take less than that; after the embedding, everything the query
still does holds the GIL for most of its time: qdrant-edge's search, then fusion, hydration (one
engine read of the memories no vector arm carried) and the stage after fusion. So an id-only arm
(BM25, the graph) that is done while the embedding still runs reads its own top `depth` memories
in one round trip, and hydration finds them at hand. It does so only if the embedding is still
running when the arm is done (`Slack.open`): an arm that finished late (a loaded host) or a cached
query vector (no embedding) leaves hydration to read what is missing, as before, since Python work
beside the engine's search delays the search by as long (the GIL is handed back only when the
holder waits or after the 5 ms switch interval).

Working out what versions and collapse read of each of those memories there too (~30 us a
memory) was measured and left out: it ran past the embedding often enough to cost the dense path
what it saved (docs/results.md, "Fixed costs").
"""

from __future__ import annotations

import threading

from ..results import Hit
from .plans import with_memories
from .source import EnsembleSource

__all__ = ["Slack", "read_ahead"]


class Slack:
    """Open until the query vector is there: the vector task closes it (`close`) as soon as its
    embedding returns or fails. `depth`: how many of an arm's hits to read ahead."""

    def __init__(self, depth: int) -> None:
        self.depth = depth
        self._closed = threading.Event()

    def close(self) -> None:
        self._closed.set()

    def open(self) -> bool:
        return not self._closed.is_set()


def read_ahead(store: EnsembleSource, namespace: str, hits: list[Hit], slack: Slack) -> list[Hit]:
    """`hits` with the memories of the first `slack.depth` read in (`plans.with_memories`), if the
    slack is still open. A failed read leaves them as they were: hydration reads them again and
    reports what it cannot, as without this read."""
    return with_memories(store, namespace, hits, slack.depth) if slack.open() else hits
