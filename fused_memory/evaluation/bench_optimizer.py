"""`fused-memory bench`'s optimizer rows: on / off, side by side, on the seed's simple queries.

The seed design says the optimizer "halves p99 on simple queries without affecting quality". The
simple queries are the shapes it can answer without embedding the query (`synth.SHAPES`: a time
alone, an identifier alone, a name alone), so that is where it is measured: p50 and p99 on and off
per shape and over their mix, and the share of queries answered in the top 10 on and off. Plain
topical queries (a few words of a memory) are their own row: there the optimizer can only skip arms
that cost little.

How each number is taken:

* every query runs with the optimizer on and off in turn (which one first alternates per query), with
  the query-embedding cache cleared before each run, so both see the same machine state and each
  pays for its embedding if it makes one;
* "answered in the top 10": the top 10 hold the query's target, or for a query that asks for a set
  (the window's events, the memories holding an identifier or naming a person: `SynthQuery.relevant`)
  as many of that set as fit (all of them, or 10). A query whose set is empty (a window with no
  event) is timed but not scored;
* `p99_ratio_ci95`: the 95% paired bootstrap interval of the p99 ratio (`significance`); p99 of
  ~50-150 queries is nearly their maximum, so it is wide;
* `fell_back`: queries whose embedding-free plan found nothing and ran the full plan.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..ensemble.plans import SHORTCUT_FALLBACK
from .metrics import percentile
from .significance import bootstrap_ci, nearest_rank
from .synth import SHAPES, SYNTH_NOW, SynthQuery

__all__ = ["optimizer_rows", "answered_in_top"]

_NS = "bench"


def answered_in_top(q: SynthQuery, ids: Sequence[str], top: int = 10) -> bool | None:
    """Does the top `top` answer `q` (see the module docstring)? None when nothing could."""
    want = q.answers()
    if not want:
        return None
    return len(want.intersection(ids[:top])) >= min(top, len(want))


def _r(x: float, digits: int = 2) -> float:
    return round(float(x), digits)


def _p99_ratio(on: Any, off: Any) -> Any:
    return nearest_rank(on, 0.99) / nearest_rank(off, 0.99)


def _summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    on = [r["on_ms"] for r in rows]
    off = [r["off_ms"] for r in rows]
    scored = [r for r in rows if r["on_hit"] is not None]
    on99, off99 = percentile(on, 0.99), percentile(off, 0.99)
    out: dict[str, Any] = {
        "n": len(rows), "on_p50_ms": _r(statistics.median(on)), "on_p99_ms": _r(on99),
        "off_p50_ms": _r(statistics.median(off)), "off_p99_ms": _r(off99),
        "p50_ratio": _r(statistics.median(on) / statistics.median(off), 3),
        "p99_ratio": _r(on99 / off99, 3) if off99 else None,
        "top10_on": _r(sum(r["on_hit"] for r in scored) / len(scored), 3) if scored else None,
        "top10_off": _r(sum(r["off_hit"] for r in scored) / len(scored), 3) if scored else None,
        "n_scored": len(scored), "embedded_on": sum(r["embedded"] for r in rows),
        "fell_back": sum(r["fell_back"] for r in rows)}
    if len(rows) >= 2 and off99:
        lo, hi = bootstrap_ci(on, off, stat=_p99_ratio)
        out["p99_ratio_ci95"] = [_r(lo, 3), _r(hi, 3)]
    return out


def _time(on: Any, off: Any, queries: Sequence[SynthQuery], clear: Callable[[], None]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for i, q in enumerate(queries):
        row: dict[str, Any] = {"kind": q.kind}
        order = (("on", on), ("off", off)) if i % 2 == 0 else (("off", off), ("on", on))
        for side, ens in order:
            clear()
            t0 = time.perf_counter()
            result = ens.retrieve(q.text, namespace=_NS, k=10, now=SYNTH_NOW)
            row[f"{side}_ms"] = (time.perf_counter() - t0) * 1000
            row[f"{side}_hit"] = answered_in_top(q, result.ids())
            if side == "on":
                row["embedded"] = result.plan.shortcut is None
                row["fell_back"] = SHORTCUT_FALLBACK in result.plan.fired
        rows.append(row)
    return rows


def optimizer_rows(on: Any, off: Any, shapes: Sequence[SynthQuery], topical: Sequence[SynthQuery],
                   clear: Callable[[], None]) -> dict[str, Any]:
    """Optimizer on vs off: over the simple mix (`shapes`), per shape, and on plain topical queries.
    `n_plain` counts the topical queries the optimizer indeed planned as dense + lexical only; on
    the rest it found an entity, a time or a type cue among the words and ran that arm too."""
    out: dict[str, Any] = {}
    mix = _time(on, off, shapes, clear)
    if mix:
        out["mix"] = _summary(mix)
        out["shapes"] = {s: _summary([r for r in mix if r["kind"] == s]) for s in SHAPES
                         if any(r["kind"] == s for r in mix)}
    plain = _time(on, off, topical, clear)
    if plain:
        out["topical"] = _summary(plain)
        out["topical"]["n_plain"] = sum(
            1 for q in topical if set(on.plan(q.text, namespace=_NS, now=SYNTH_NOW)[1].arms) <= {"dense", "lexical"})
    return out
