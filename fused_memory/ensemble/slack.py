"""What an arm's thread does while the query embedding runs: read ahead for hydration.

onnxruntime releases the GIL while it embeds the query, and BM25 and
the graph, run beside it, usually take less than that; after the embedding, everything the query
still does holds the GIL for most of its time: qdrant-edge's search, then fusion, hydration (one
engine read of the memories no vector arm carried) and the stage after fusion. So an id-only arm
(BM25, the graph) that is done while the embedding still runs reads its own top `depth` memories
in one round trip, and hydration finds them at hand. It does so only if the embedding is still
running when the arm is done (`Slack.open`): an arm that finished late (a loaded host) or a cached
query vector (no embedding) leaves hydration to read what is missing, as before, since Python work
beside the engine's search delays the search by as long (the GIL is handed back only when the
holder waits or after the 5 ms switch interval).

Working out what versions and collapse read of each of those memories there too was measured and
left out: it ran past the embedding often enough to cost the dense path what it saved
(docs/decisions/0017-python-beside-the-search.md).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from ..errors import StoreClosed
from ..results import Hit
from ..types import Memory
from .source import EnsembleSource

__all__ = ["Slack", "read_ahead"]


class Slack:
    """Open until the query vector is there: the vector task closes it (`close`) as soon as its
    embedding returns or fails. `depth`: how many of an arm's hits to read ahead; `memories`: what
    was read, by id (the job's `ahead`, which hydration reads)."""

    def __init__(self, depth: int, memories: dict[str, Memory]) -> None:
        self.depth, self.memories = depth, memories
        self._closed = threading.Event()

    def close(self) -> None:
        self._closed.set()

    def open(self) -> bool:
        return not self._closed.is_set()


def read_ahead(store: EnsembleSource, namespace: str, hits: Sequence[Hit], slack: Slack) -> None:
    """Read the memories of the first `slack.depth` hits into `slack.memories`, if the slack is
    still open. The hits are left as the arm gave them. A read that fails for any reason but a
    closed store is dropped: hydration reads what is missing and reports what it cannot, as without
    this read."""
    if not slack.open():
        return
    wanted = [h.memory_id for h in hits[:slack.depth]
              if h.memory is None and h.payload is None and h.memory_id not in slack.memories]
    if not wanted:
        return
    try:
        found = store.get_many(namespace, wanted)
    except StoreClosed:
        raise
    except Exception:  # noqa: BLE001 - a read ahead must never cost the arm its answer
        return
    slack.memories.update((m.id, m) for m in found)
