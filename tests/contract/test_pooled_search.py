"""`search_pooled` against both real Qdrant engines: a search read off a broader one returns what
the engine's own filtered search returns (its top, in order), and falls back to the engine when
the broader result holds too few matches. 400 random unit vectors in 16 dimensions: no ties, and
well under the engines' full-scan threshold, so every search is exact and the equality is too."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fused_memory.backends.protocols import ScoredPayload, VectorBackend, VectorFilter, VectorQuery, VectorRecord
from fused_memory.backends.vector.edge import QdrantEdgeBackend
from fused_memory.backends.vector.pooling import search_pooled
from fused_memory.backends.vector.server import QdrantClientBackend
from fused_memory.types import MemoryType

DIM = 16
TYPES = ("fact", "event", "preference", "entity")
NAMES = ("Sarah", "SARAH", "Berlin", "Mel", "acme")


def _unit(rng: random.Random) -> tuple[float, ...]:
    v = [rng.gauss(0.0, 1.0) for _ in range(DIM)]
    norm = sum(x * x for x in v) ** 0.5
    return tuple(x / norm for x in v)


@pytest.fixture(scope="module", params=["edge", "client-memory"])
def engine(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[VectorBackend]:
    root: Path = tmp_path_factory.mktemp("pooled")
    vb: VectorBackend = (QdrantEdgeBackend(str(root / "edge")) if request.param == "edge"
                         else QdrantClientBackend(location=":memory:", collection="pooled"))
    vb.open(DIM)
    rng = random.Random(5)
    records = []
    for i in range(400):
        ns = "a" if i % 10 else "b"
        payload: dict[str, Any] = {
            "memory_id": f"m{i}", "namespace": ns, "text": f"memory {i}", "type": rng.choice(TYPES),
            "event_at": None, "entities": rng.sample(NAMES, rng.randint(0, 2)),
            "answers": ["time"] if rng.random() < 0.3 else []}
        records.append(VectorRecord(f"m{i}", ns, _unit(rng), payload))
    vb.upsert(records)
    yield vb
    vb.close()


class Counting:
    """The engine's own `query_batch`, counting how many searches reach it."""

    def __init__(self, vb: VectorBackend) -> None:
        self.vb, self.searches = vb, 0

    def __call__(self, queries: list[VectorQuery]) -> list[list[ScoredPayload]]:
        self.searches += len(queries)
        return self.vb.query_batch(queries)


def ids(hits: list[ScoredPayload]) -> list[str]:
    return [str(h.payload["memory_id"]) for h in hits]


STRICTER = [
    {"types": frozenset({MemoryType.PREFERENCE})},
    {"types": frozenset({MemoryType.EVENT, MemoryType.FACT})},
    {"answers": "time"},
    {"entities": ("Sarah", "SARAH")},
    {"entities": ("acme",), "types": frozenset({MemoryType.ENTITY})},
]


@pytest.mark.parametrize("seed, flt", list(enumerate(STRICTER)),
                         ids=lambda f: "+".join(sorted(f)) if isinstance(f, dict) else "")
def test_a_search_read_off_a_broader_one_is_the_engines_own_top(engine: VectorBackend, seed: int,
                                                                 flt: dict[str, Any]) -> None:
    rng = random.Random(seed)
    read_off = 0
    for _ in range(20):
        vec = _unit(rng)
        queries = [VectorQuery(vec, VectorFilter("a"), 50), VectorQuery(vec, VectorFilter("a", **flt), 50)]
        direct = engine.query_batch(queries)
        (broad, strict), pooled = search_pooled(engine.query_batch, queries, min_hits=3)
        assert ids(broad) == ids(direct[0])
        assert all(h.payload["namespace"] == "a" for h in strict)
        if 1 in pooled:
            read_off += 1
            assert len(strict) >= 3 and ids(strict) == ids(direct[1])[:len(strict)]
            assert [h.score for h in strict] == pytest.approx([h.score for h in direct[1][:len(strict)]])
        else:
            assert ids(strict) == ids(direct[1])
    assert read_off > 0  # the case under test happened


def test_too_few_matches_send_the_search_to_the_engine(engine: VectorBackend) -> None:
    vec = _unit(random.Random(9))
    queries = [VectorQuery(vec, VectorFilter("a"), 20),
               VectorQuery(vec, VectorFilter("a", entities=("Mel",)), 20)]
    direct = engine.query_batch(queries)
    matches = sum("Mel" in h.payload["entities"] for h in direct[0])
    counting = Counting(engine)
    (_, strict), pooled = search_pooled(counting, queries, min_hits=matches + 1)
    assert pooled == frozenset() and counting.searches == 2 and ids(strict) == ids(direct[1])
    counting = Counting(engine)
    (_, strict), pooled = search_pooled(counting, queries, min_hits=matches)
    assert pooled == {1} and counting.searches == 1 and ids(strict) == ids(direct[1])[:matches]


def test_a_broader_search_that_saw_everything_answers_whatever_it_holds(engine: VectorBackend) -> None:
    """Namespace "b" has 40 memories: a limit-50 search returns them all, so its matches are all
    the matches there are, however few."""
    vec = _unit(random.Random(3))
    queries = [VectorQuery(vec, VectorFilter("b"), 50), VectorQuery(vec, VectorFilter("b", entities=("Mel",)), 50)]
    direct = engine.query_batch(queries)
    assert len(direct[0]) == 40 and 0 < len(direct[1]) < 10
    counting = Counting(engine)
    (_, strict), pooled = search_pooled(counting, queries, min_hits=10)
    assert pooled == {1} and counting.searches == 1 and ids(strict) == ids(direct[1])


def test_min_hits_zero_sends_every_search_to_the_engine(engine: VectorBackend) -> None:
    vec = _unit(random.Random(4))
    counting = Counting(engine)
    queries = [VectorQuery(vec, VectorFilter("a"), 50), VectorQuery(vec, VectorFilter("a", answers="time"), 50)]
    _, pooled = search_pooled(counting, queries, min_hits=0)
    assert pooled == frozenset() and counting.searches == 2
