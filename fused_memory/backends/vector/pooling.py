"""Answering a stricter search from a broader one of the same query vector.

One query's vector arms often ask the engine the same nearest-neighbour question under
stricter keyword filters: dense asks within the namespace, the type arm within the namespace
and the hinted types, the temporal arm (answer mode) among memories that state a time, the
scoped graph among memories that mention a hub. Under an exact search, the memories of the
broader search's top N that also pass the stricter filter *are* the stricter search's top m
(m = how many pass): nothing outside the broader top N can outrank them. So once the broader
search has run, the stricter one can be read off it; only when fewer than `min_hits` pass is it
sent to the engine (in a second call). A filtered HNSW search costs about as much as the
unfiltered one, and dense's top 50 usually holds `FusionConfig.pool_min` memories of a hinted type
(docs/decisions/0003-depth-widening-pool-min.md).

Only keyword conditions are read off (`MatchOne`, `MatchAnyOf`: exact string comparisons, the
same in Python as in both engines). Ranges are always left to the engine: qdrant-edge reads some
floats back one ULP off, which would move a memory sitting exactly on a window's edge.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..protocols import ScoredPayload, VectorQuery
from .common import Condition, MatchAnyOf, MatchOne, filter_conditions

__all__ = ["payload_matches", "search_pooled"]

Search = Callable[[list[VectorQuery]], list[list[ScoredPayload]]]


def payload_matches(cond: Condition, payload: Mapping[str, Any]) -> bool:
    """Whether a payload passes one keyword condition, as Qdrant decides it: a list field matches
    when any of its elements does; a missing field never matches."""
    if not isinstance(cond, (MatchOne, MatchAnyOf)):
        raise TypeError(f"only keyword conditions can be read off a search, not {cond!r}")
    value = payload.get(cond.key)
    values = value if isinstance(value, list) else () if value is None else (value,)
    if isinstance(cond, MatchOne):
        return any(v == cond.value for v in values)
    return any(v in cond.values for v in values)


def _extra_conditions(base: VectorQuery, base_conds: frozenset[Condition], query: VectorQuery,
                      conds: tuple[Condition, ...]) -> tuple[Condition, ...] | None:
    """The keyword conditions `query` (whose conditions are `conds`) adds to `base`, or None when
    `query` cannot be read off it (another vector, a deeper limit, not strictly narrower, or a range)."""
    if query.limit > base.limit or (base.vector is not query.vector and base.vector != query.vector):
        return None
    if not base_conds < frozenset(conds):
        return None
    extra = tuple(c for c in conds if c not in base_conds)
    return extra if all(isinstance(c, (MatchOne, MatchAnyOf)) for c in extra) else None


def _bases(queries: Sequence[VectorQuery]) -> dict[int, tuple[int, tuple[Condition, ...]]]:
    """For each query that can be read off another: (the broadest such query, the extra conditions).
    Only a query that cannot be read off anything serves as a base, so a read-off never waits on
    another read-off."""
    conds = [filter_conditions(q.filter) for q in queries]  # once per query, not once per pair
    sets = [frozenset(c) for c in conds]
    found = {i: [(j, extra) for j, b in enumerate(queries)
                 if j != i and (extra := _extra_conditions(b, sets[j], q, conds[i])) is not None]
             for i, q in enumerate(queries)}
    roots = {i for i, candidates in found.items() if not candidates}
    plans: dict[int, tuple[int, tuple[Condition, ...]]] = {}
    for i, candidates in found.items():
        usable = [c for c in candidates if c[0] in roots]
        if usable:
            plans[i] = max(usable, key=lambda c: len(c[1]))
    return plans


def search_pooled(search: Search, queries: Sequence[VectorQuery], min_hits: int
                  ) -> tuple[list[list[ScoredPayload]], frozenset[int]]:
    """Run `queries` through `search`, reading stricter ones off broader ones where the broader
    result holds at least `min_hits` matches (or all there are: a broader search that came back
    short of its limit saw every memory it could). Returns the results in order and the indexes
    answered by reading off. `min_hits <= 0` sends every query to the engine."""
    plans = _bases(queries) if min_hits > 0 and len(queries) > 1 else {}
    first = [i for i in range(len(queries)) if i not in plans]
    results: dict[int, list[ScoredPayload]] = dict(zip(first, search([queries[i] for i in first]), strict=True))
    later: list[int] = []
    for i, (b, extra) in plans.items():
        pool = results[b]
        kept = [s for s in pool if all(payload_matches(c, s.payload) for c in extra)][:queries[i].limit]
        if len(kept) >= min(min_hits, queries[i].limit) or len(pool) < queries[b].limit:
            results[i] = kept
        else:
            later.append(i)
    if later:
        results.update(zip(later, search([queries[i] for i in later]), strict=True))
    return [results[i] for i in range(len(queries))], frozenset(plans).difference(later)
