"""Helpers of the graph contract (`test_graph_backends`, `test_graph_asked_relations`): the clock,
the namespace, and short ways to link memories and read a traversal's scores and details."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import pytest

from fused_memory.backends.protocols import GraphStore
from fused_memory.types import EntityMention as M
from fused_memory.types import MemoryType, Relation

__all__ = ["NOW", "NS", "Factory", "link", "scores", "details", "approx", "chain"]

NOW = datetime(2024, 5, 15, 12, 0, tzinfo=timezone.utc)
NS = "alice"
Factory = Callable[[], Any]


def link(g: GraphStore, ns: str, *items: tuple[str, list[Any]], mtype: MemoryType | None = None) -> None:
    g.link(ns, [(mid, [m if isinstance(m, M) else M(m) for m in ms], mtype) for mid, ms in items])


def scores(g: GraphStore, seeds: list[tuple[str, float]], hops: int = 3, limit: int = 50, ns: str = NS,
           **kw: Any) -> dict[str, float]:
    return {h.memory_id: h.score for h in g.traverse(ns, seeds, hops, limit, NOW, **kw)}


def details(g: GraphStore, seeds: list[tuple[str, float]], hops: int = 3, **kw: Any) -> dict[str, str | None]:
    return {h.memory_id: h.detail for h in g.traverse(NS, seeds, hops, 50, NOW, **kw)}


def approx(d: dict[str, float]) -> dict[str, Any]:
    return {k: pytest.approx(v, abs=1e-9) for k, v in d.items()}


def chain(g: GraphStore) -> None:
    link(g, NS, ("m0", ["Alpha"]), ("m1", ["Bravo"]), ("m2", ["Charlie"]), ("m3", ["Delta"]))
    g.relate(NS, Relation("Alpha", "manages", "Bravo", "structural", 0.9))
    g.relate(NS, Relation("Bravo", "works_with", "Charlie", "semantic", 0.8))
    g.relate(NS, Relation("Charlie", "joined", "Delta", "lifecycle", 0.7))
