"""The Qdrant-backed arms: dense, temporal, type, and the graph arm scoped to hub entities.

Each builds one `VectorQuery` and turns the engine's answer into `Hit`s. They are split that way
(build / interpret) so the ensemble can send all of one query's vector searches to the engine as a
single batch: qdrant-edge holds the GIL while it searches, so threads would not overlap, but one
batch of N costs about half of N single calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol, runtime_checkable

from ..backends.codec import from_payload
from ..backends.protocols import ScoredPayload, VectorFilter, VectorQuery
from ..backends.vector.pooling import search_pooled
from ..query.cues import ANSWER_TIME, TemporalMode, temporal_mode
from ..query.shapes import spoken
from ..results import Hit
from ..times import MemoryTimes, TimeKind
from ..types import MemoryType
from .base import ArmRequest, VectorSource, dedupe_hits, time_detail

__all__ = ["VectorArm", "DenseRetriever", "TemporalRetriever", "TypeFilterRetriever", "ScopedGraphRetriever",
           "run_vector_arms"]


@runtime_checkable
class VectorArm(Protocol):
    name: str

    def vector_query(self, request: ArmRequest) -> VectorQuery | None:
        """The search this arm needs, or None when it cannot contribute (no window, no types)."""
        ...

    def hits_from(self, request: ArmRequest, scored: Sequence[ScoredPayload]) -> list[Hit]: ...


def _cos01(score: float) -> float:
    """Cosine clamped to [0, 1]: a negative similarity is no evidence at all."""
    return max(0.0, min(1.0, float(score)))


def run_vector_arms(source: VectorSource, jobs: Sequence[tuple[VectorArm, ArmRequest]], pool_min: int = 0
                    ) -> tuple[list[list[Hit]], frozenset[int]]:
    """Run several vector arms, each with its own request, as one engine batch: one list of hits
    per job, in order, and the jobs whose search was read off a broader one.

    Requests without a vector get the query embedded once, and identical searches run once:
    "when did the outage happen?" filters both the type arm (hint: event) and the windowless
    temporal arm to events, and a hard type pre-filter gives dense the type arm's filter; each
    arm still scores the shared results its own way. With `pool_min > 0` a search that only adds
    keyword conditions to another (the type arm's types, the scoped graph's names) is read off
    that one's results when they hold `pool_min` matches (`backends.vector.pooling`)."""
    vector: tuple[float, ...] | None = None
    unique: dict[VectorQuery, int] = {}
    slots: list[tuple[int, int]] = []  # (job, position of its search in `unique`)
    prepared: list[ArmRequest] = []
    for i, (arm, request) in enumerate(jobs):
        if request.vector is None:
            if vector is None:
                vector = source.embed_query(request.text_to_embed())
            request = replace(request, vector=vector)
        prepared.append(request)
        q = arm.vector_query(request)
        if q is not None:
            slots.append((i, unique.setdefault(q, len(unique))))
    out: list[list[Hit]] = [[] for _ in jobs]
    if not unique:
        return out, frozenset()
    results, read_off = search_pooled(source.vector_search, list(unique), pool_min)
    for i, at in slots:
        out[i] = jobs[i][0].hits_from(prepared[i], results[at])
    return out, frozenset(i for i, at in slots if at in read_off)


class _VectorArmBase:
    name = "vector"

    def __init__(self, source: VectorSource) -> None:
        self.source = source

    def search(self, request: ArmRequest) -> list[Hit]:
        """This arm alone: hits with their `memory` filled from the payload."""
        hits = run_vector_arms(self.source, [(self, request)])[0][0]  # type: ignore[list-item]
        return [replace(h, memory=from_payload(h.payload)) if h.payload is not None else h for h in hits]

    def _hits(self, scored: Sequence[ScoredPayload], k: int, detail: str | None = None) -> list[Hit]:
        hits = [Hit(str(s.payload["memory_id"]), self._score(s), detail, payload=s.payload) for s in scored]
        return dedupe_hits(hits, k)

    def _score(self, s: ScoredPayload) -> float:
        return _cos01(s.score)


class DenseRetriever(_VectorArmBase):
    """Cosine nearest neighbours, with the type pre-filter and time window pushed into Qdrant."""

    name = "dense"

    def vector_query(self, request: ArmRequest) -> VectorQuery | None:
        assert request.vector is not None
        return VectorQuery(request.vector, VectorFilter(request.namespace, request.types), request.k)

    def hits_from(self, request: ArmRequest, scored: Sequence[ScoredPayload]) -> list[Hit]:
        return self._hits(scored, request.k)


class TemporalRetriever(_VectorArmBase):
    """Memories with a time inside the query's window, ranked by relevance (`times.MemoryTimes`:
    when it happened, a time its text states, or when it was said).

    Score = 0.5 + 0.5 * cosine for a memory that happened or states a time inside the window: being
    inside the asked-for window is itself half the evidence ("what did I do last Tuesday?" wants
    every event of that day), relevance orders them. A memory only *said* inside it scores 0.25 +
    0.25 * cosine, below every one of those ("what did I do on June 14?": the vet booked for the 14th
    before whatever was said that day), unless the question asks what was said ("what did I tell
    you yesterday?", `shapes.spoken`): then being said there is the whole point. The detail says
    which time matched ("states Jun 14", "said yesterday").

    Without a window, two modes:
    * the query asks for a time ("when did Caroline go to the support group?"): memories of any
      type that state a time (payload `answers` has "time", see `query.cues`), ranked by cosine.
      The answer to a "when" question is a memory that says when.
    * otherwise, speculative ("latest", "recent"): Event memories by relevance, at half weight.
    """

    name = "temporal"

    def vector_query(self, request: ArmRequest) -> VectorQuery | None:
        assert request.vector is not None
        mode = temporal_mode(request.window, request.query.answer_type)
        if mode == TemporalMode.ANSWER:
            f = VectorFilter(request.namespace, request.types, answers=ANSWER_TIME)
        elif mode == TemporalMode.WINDOW:
            f = VectorFilter(request.namespace, request.types, time_window=request.window)
        else:
            f = VectorFilter(request.namespace, request.types or frozenset({MemoryType.EVENT}))
        return VectorQuery(request.vector, f, request.k)

    def hits_from(self, request: ArmRequest, scored: Sequence[ScoredPayload]) -> list[Hit]:
        mode = temporal_mode(request.window, request.query.answer_type)
        if mode != "window" or request.window is None:
            return self._hits(scored, request.k, "states a time" if mode == "answer" else "event (no window)")
        window, said_counts = request.window, spoken(request.query)
        hits = []
        for s in scored:
            found = MemoryTimes.of_payload(s.payload).match(window, slack_s=1.0)
            if found is None:  # not what the engine's filter lets through: a payload it cannot have matched
                continue
            cos = _cos01(s.score)
            score = 0.5 + 0.5 * cos if found.kind is not TimeKind.SAID or said_counts else 0.25 + 0.25 * cos
            hits.append(Hit(str(s.payload["memory_id"]), score, time_detail(found, request.query.now),
                            payload=s.payload))
        return dedupe_hits(hits, request.k)


class TypeFilterRetriever(_VectorArmBase):
    """Memories of the types the query implies, ranked by relevance (cosine). No hints -> nothing."""

    name = "type"

    def __init__(self, source: VectorSource, types: frozenset[MemoryType] | None = None) -> None:
        super().__init__(source)
        self.types = types

    def vector_query(self, request: ArmRequest) -> VectorQuery | None:
        types = request.types or self.types
        if not types:
            return None
        assert request.vector is not None
        return VectorQuery(request.vector, VectorFilter(request.namespace, frozenset(types)), request.k)

    def hits_from(self, request: ArmRequest, scored: Sequence[ScoredPayload]) -> list[Hit]:
        types = request.types or self.types or frozenset()
        return self._hits(scored, request.k, "type in " + ",".join(sorted(t.value for t in types)))


class ScopedGraphRetriever(_VectorArmBase):
    """The graph arm when every seed is a hub: the memories mentioning them, ranked by relevance.

    Traversing from a hub reaches most of the namespace at hop 0, all at one score; the memories
    that mention it are the right set, and cosine to the query is what orders them (see
    `store_rules.scope_hub_seeds`). One filtered search on the payload's `entities`, in the same
    engine batch as the other vector arms. No scope (`ArmRequest.scope`) -> nothing."""

    name = "graph"

    def vector_query(self, request: ArmRequest) -> VectorQuery | None:
        if not request.scope:
            return None
        assert request.vector is not None
        return VectorQuery(request.vector, VectorFilter(request.namespace, request.types, entities=request.scope),
                           request.k)

    def hits_from(self, request: ArmRequest, scored: Sequence[ScoredPayload]) -> list[Hit]:
        hubs = ", ".join(dict.fromkeys(c.name for ref in request.query.entity_refs for c in ref.candidates))
        return self._hits(scored, request.k, f"mentions {hubs or 'the seed'} (a hub), ranked by relevance")
