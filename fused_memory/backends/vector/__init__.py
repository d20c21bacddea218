"""Qdrant behind `VectorBackend`: `edge` (qdrant-edge, in process, the embedded default) and
`server` (qdrant-client: a server, a cluster or local mode), with `common` (filters, payload
indexes, the meta point) and `pooling` (reading a filtered search off a broader one)."""

from __future__ import annotations

__all__: list[str] = []
