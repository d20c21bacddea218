"""The entity-graph arm: memories connected to the entities the query names.

It answers relational questions that have no lexical or semantic anchor ("who reports to Sarah?").
Seeds come from `ParsedQuery.entity_refs`: a confident ref (top candidate >= 0.7) seeds its top
candidate; an ambiguous one fans out from every candidate, each weighted by its confidence. The
store does the hop traversal and scoring (`fused_memory.backends.graph.traversal`).

Multi-hop weighting: multi-hop evidence counts 0.8 of a direct mention (docs/design.md, "The
graph"), but fusion has one weight per arm. So the arm keeps weight 1.0 and multiplies
the *score* of every hit found at hop >= 1 by MULTI_HOP_FACTOR (0.8) inside the traversal, before
hits are ranked, so a 1-hop memory never outranks an equally scored direct mention.

Asked relations: the plan's (`ArmRequest.asked`) go to the traversal, so "who reports to Sarah?"
starts from the people at the other end of Sarah's `reports_to` edges, and Sarah's own memories come
one hop behind (`query.relations`, `backends.graph.traversal`, "Asked relations").
"""

from __future__ import annotations

from ..backends.graph.traversal import MAX_HOPS
from ..errors import BackendError, FusedMemoryError
from ..query.entities import AMBIGUOUS_BELOW, seed_candidates
from ..results import EntityRef, Hit
from .base import ArmRequest, GraphSearch

__all__ = ["GraphRetriever", "MULTI_HOP_FACTOR", "AMBIGUOUS_BELOW", "seeds_from_refs"]

MULTI_HOP_FACTOR = 0.8


def seeds_from_refs(refs: tuple[EntityRef, ...] | list[EntityRef]) -> list[tuple[str, float]]:
    """(entity id, weight) seeds, each entity once at its highest weight, in a stable order."""
    weights: dict[str, float] = {}
    for ref in refs:
        for c in seed_candidates(ref):
            w = min(1.0, max(0.0, float(c.confidence)))
            if c.entity_id and w > 0.0:
                weights[c.entity_id] = max(weights.get(c.entity_id, 0.0), w)
    return sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))


class GraphRetriever:
    """`Retriever` over any `GraphSearch`: a `GraphStore` (embedded or Cypher), or a `MemoryStore`,
    which opens its graph first (and refuses once closed, rather than reopening it). Backend
    failures surface as the store raised them (`BackendUnavailable` for a dead server) so the
    ensemble can drop the arm and say why."""

    def __init__(self, graph: GraphSearch, name: str = "graph", multi_hop_factor: float = MULTI_HOP_FACTOR) -> None:
        self.graph = graph
        self.name = name
        self.multi_hop_factor = float(multi_hop_factor)

    def search(self, request: ArmRequest) -> list[Hit]:
        seeds = seeds_from_refs(request.query.entity_refs)
        if not seeds or request.k <= 0:
            return []
        max_hops = max(0, min(MAX_HOPS, int(request.max_hops)))
        try:
            return self.graph.traverse(request.namespace, seeds, max_hops, request.k, request.query.now,
                                       multi_hop_factor=self.multi_hop_factor, types=request.types,
                                       asked=request.asked)
        except FusedMemoryError:
            raise
        except Exception as exc:  # noqa: BLE001 - a backend bug must not escape as a bare exception
            raise BackendError(f"graph arm failed: {exc}") from exc

    def __repr__(self) -> str:
        return f"GraphRetriever({type(self.graph).__name__}, name={self.name!r})"
