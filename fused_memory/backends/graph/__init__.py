"""The entity graph behind `GraphStore`: `embedded` (SQLite in process, with `space` per namespace),
`cypher` (the neo4j driver over Bolt, with `dialect`, `queries` and `cypher_gc`) and `engine` (points
in a Qdrant collection beside the memories, with `engine_points` and `engine_walk`), sharing
`traversal` (the scored hop walk and its constants), `aliases`, `values` (checks and keys) and `gc`
(when a name no memory mentions is deleted).

`hub_damping` and `MAX_HOPS` are exported here because the query planner reads them too."""

from __future__ import annotations

from .traversal import MAX_HOPS, hub_damping

__all__ = ["MAX_HOPS", "hub_damping"]
