"""Recency and supersession: the stage after fusion's two answers to facts that change.

Recency is one more ranked list, fused like the arms' lists (`fusion.rrf_contribution`): the
contenders ranked by how recent they are, each with the score

    recency(m) = 0.5 ** (age(m) / half_life)        age from `event_at`, else `created_at`, to the query's now

(a memory dated after now counts as stated now: age 0). Equal times share a rank (the turns of one
conversation session are all equally recent), and a memory with no time is not in the list, as a
memory an arm did not find is not in that arm's list. Its weight is the caller's per call, else
`FusionConfig.current_state_recency` on a question the optimizer finds about the current state
(`optimizer.current_state_recency`: "now", "currently", "still"...), else `recency_weight` (0 by
default; see `FusionConfig` for the measurements). Like supersession, it does not apply (unless the
caller asks for it) to a query that names a time before today or asks when: "when did Jon get his
mentor?" is about an older memory as often as a newer one (docs/decisions/0025-recency-list.md).

The contenders are the candidates about as relevant as the best one: those whose similarity to the
query (the dense arm's cosine) is within `FusionConfig.recency_band` of the highest. Recency orders
the memories that answer the question; it is not a reason to bring up one that does not. Ranked over
every candidate, the recency list put a meeting with Sarah from last week above where Sarah lives now
(the graph and BM25 score every memory naming her alike), and the higher its weight the more often
(docs/decisions/0025-recency-list.md). When the dense arm did not answer, every candidate is a
contender.

Supersession is a rule about memories that are versions of one fact, which `versions` groups by
slot key (the caller's predicate, or the slot the text states: "My manager is ...", "we moved from
Leeds to York") or by a value a change names as the one before; alike texts are never versions.
Among the versions of one fact in the result, the newer outranks the older: they keep the places
they hold between them, newest first, and every other hit keeps its place. Not applied when the
query names a time before today ("where did I live in March?") or asks when, since then an older
version may be the answer.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from ..query.optimizer import reaches_now
from ..results import Arm, Contribution, ParsedQuery
from ..times import MemoryTimes
from ..types import TimeWindow
from .candidate import Candidate, memory_time
from .fusion import rrf_contribution
from .versions import order_versions, version_groups

__all__ = ["decay", "contenders", "recency_ranks", "add_recency", "add_nearness", "predicate_key", "supersede",
           "about_now"]

_DAY_S = 86400.0
_SEPARATORS = re.compile(r"[\s_.\-]+")


def decay(age_days: float, half_life_days: float) -> float:
    """0.5 ** (age / half-life), in (0, 1]; a negative age (dated after now) counts as 0."""
    return math.pow(0.5, max(0.0, age_days) / half_life_days)


def contenders(candidates: Sequence[Candidate], band: float | None) -> list[int]:
    """The indices of the candidates whose dense cosine is within `band` of the best candidate's
    (every candidate when `band` is None or no candidate has a dense score)."""
    similarity = {i: c.raw_score for i, cand in enumerate(candidates) for c in cand.contributions if c.arm == Arm.DENSE}
    if band is None or not similarity:
        return list(range(len(candidates)))
    floor = max(similarity.values()) - band
    return [i for i, s in similarity.items() if s >= floor]


def recency_ranks(candidates: Sequence[Candidate], now: datetime, half_life_days: float,
                  among: Sequence[int] | None = None) -> dict[int, tuple[int, float, float]]:
    """{index: (rank, recency score, age in days)} for the candidates (those of `among`, if given)
    with a time, newest first; equal times share the best rank of their group (competition
    ranking, "1224")."""
    timed = []
    for i in (range(len(candidates)) if among is None else among):
        c = candidates[i]
        when = memory_time(c.memory)
        if when is not None:
            timed.append((i, (now - when).total_seconds() / _DAY_S))
    timed.sort(key=lambda t: (t[1], t[0]))
    out: dict[int, tuple[int, float, float]] = {}
    rank, previous = 0, None
    for place, (i, age) in enumerate(timed, start=1):
        if age != previous:
            rank, previous = place, age
        out[i] = (rank, decay(age, half_life_days), age)
    return out


def add_recency(candidates: Sequence[Candidate], weight: float, k: int, now: datetime,
                half_life_days: float, band: float | None = None,
                among: Sequence[int] | None = None) -> list[Candidate]:
    """The candidates with the recency list over the contenders fused in (weight `weight`, RRF
    constant `k`), re-ranked by their new scores; ties keep their fused order. The contenders are
    `among` when given (the stage after fusion passes the memories that have another version in
    the result, `versions.version_groups`), else those within `band` of the best match. Weight 0,
    or no contender, changes nothing."""
    if weight <= 0 or not candidates or (among is not None and not among):
        return list(candidates)
    ranks = recency_ranks(candidates, now, half_life_days, among if among is not None else contenders(candidates, band))
    out: list[tuple[float, int, Candidate]] = []
    for i, c in enumerate(candidates):
        if i in ranks:
            rank, score, age = ranks[i]
            term = rrf_contribution(weight, score, rank, k)
            share = Contribution(arm="recency", rank=rank, raw_score=score, weight=weight, contribution=term,
                                 detail=f"{_age(age)} old, half-life {half_life_days:g} d")
            c = replace(c, score=c.score + term, contributions=(*c.contributions, share))
        out.append((-c.score, i, c))
    out.sort(key=lambda t: (t[0], t[1]))
    return [c for _, _, c in out]


def add_nearness(candidates: Sequence[Candidate], window: TimeWindow, weight: float, k: int) -> list[Candidate]:
    """The candidates with the "near window" list fused in: for a question whose window held no
    memory ("what did I do today?" on a day nothing was saved), the candidates ranked by how near
    the nearest of their times (`times.MemoryTimes`) lies to the window, scored by how near it is
    next to the nearest, (1 + nearest) / (1 + distance) in days (1 for the nearest, however far the
    window lies); equal distances share a rank, a memory with no time is not on the list. Weight 0
    changes nothing."""
    if weight <= 0 or not candidates:
        return list(candidates)
    near = sorted(((MemoryTimes.of(c.memory).distance_days(window), i) for i, c in enumerate(candidates)))
    nearest = near[0][0] if near else 0.0
    out: list[tuple[float, int, Candidate]] = []
    ranks: dict[int, tuple[int, float]] = {}
    rank, previous = 0, None
    for place, (distance, i) in enumerate(near, start=1):
        if math.isinf(distance):
            break
        if distance != previous:
            rank, previous = place, distance
        ranks[i] = (rank, distance)
    for i, c in enumerate(candidates):
        if i in ranks:
            rank, distance = ranks[i]
            score = (1.0 + nearest) / (1.0 + distance)
            term = rrf_contribution(weight, score, rank, k)
            told = "inside the window" if distance == 0 else f"{_age(distance)} from the window"
            share = Contribution(arm="near window", rank=rank, raw_score=score, weight=weight, contribution=term,
                                 detail=told)
            c = replace(c, score=c.score + term, contributions=(*c.contributions, share))
        out.append((-c.score, i, c))
    out.sort(key=lambda t: (t[0], t[1]))
    return [c for _, _, c in out]


def _age(days: float) -> str:
    if days < 1:
        return f"{max(0.0, days) * 24:.0f} h"
    return f"{days:.0f} d" if days < 730 else f"{days / 365.25:.1f} y"


def predicate_key(predicate: str | None) -> str | None:
    """A predicate as supersession compares it: NFKC, case-folded, `_` `-` `.` and spaces as one
    space; None for no (or a blank) predicate."""
    if predicate is None:
        return None
    key = _SEPARATORS.sub(" ", unicodedata.normalize("NFKC", predicate).casefold()).strip()
    return key or None


def about_now(parsed: ParsedQuery) -> bool:
    """Whether the query may be about the present, where supersession and the recency list apply:
    not when it names a time before today or asks when (then an older memory may be the answer);
    "these days" and "recently" are windows up to now, about the present."""
    return reaches_now(parsed) and parsed.answer_type != "time"


def supersede(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Among the candidates that are versions of one fact by their keys (`versions.version_groups`
    without stored vectors: same slot key, different text, a known time), the newest takes the best
    place they hold, the next newest the next, and so on; every other candidate keeps its place.
    The newest lists the others in `supersedes`, each other names it in `superseded_by`."""
    return order_versions(candidates, version_groups(candidates, len(candidates)))
