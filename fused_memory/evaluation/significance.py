"""How sure a margin is: fused minus the best single arm, with a paired bootstrap interval.

The quality targets ask that fusion beat the best single arm by 5 points in every category
(docs/results.md). On LoCoMo's public
split a category has 44-418 questions, so one question moves a category's Recall@5 by 0.2-2.3
points: a margin printed without its spread cannot say whether a category is behind the target or
merely small. The interval is the percentile bootstrap of the mean per-query difference (fused's
metric minus the arm's on the same question, resampled together, so what the two systems share
cancels), the standard check for a paired IR comparison. The best arm is chosen on the same
questions, which favours it: the interval is, if anything, unkind to fusion.

`fused-memory bench` uses the same resampling for its two ratio targets: the median per-query
fan-out (queries resampled) and the optimizer's p99 ratio (each query timed on and off in turn,
resampled as pairs). A p99 of ~100 queries is nearly their maximum, so that interval is wide.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from .metrics import rank_index

__all__ = ["bootstrap_ci", "median_of", "nearest_rank", "fusion_margins", "LEVEL", "RESAMPLES", "MIN_N"]

LEVEL = 0.95
#: 2,000 resamples put the 2.5% and 97.5% quantiles within ~0.2 points of their limit on LoCoMo's
#: category sizes; the seed is fixed so a report is reproducible.
RESAMPLES = 2000
#: Below this many questions a slice's interval is not given: a bootstrap of 1-9 values mostly
#: restates them (one question gives an interval of zero width).
MIN_N = 10
_CHUNK_CELLS = 4_000_000


def bootstrap_ci(*samples: Sequence[float], stat: Callable[..., np.ndarray] | None = None,
                 level: float = LEVEL, resamples: int = RESAMPLES, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of `stat` over one or more paired samples (one value per
    query each, resampled with the same indices). `stat(*resampled)` gets arrays of shape
    (resamples, n) and returns one value per resample; the default is the mean of one sample."""
    arrays = [np.asarray(x, dtype=float) for x in samples]
    if not arrays or any(x.ndim != 1 or x.size == 0 for x in arrays):
        raise ValueError("bootstrap_ci needs at least one value per sample")
    if len({x.size for x in arrays}) != 1:
        raise ValueError("paired samples must have one value per query each")
    if not 0.0 < level < 1.0 or resamples < 1:
        raise ValueError(f"level must be in (0, 1) and resamples >= 1, got {level!r}, {resamples!r}")
    if stat is None:
        if len(arrays) != 1:
            raise ValueError("give a stat for more than one sample")
        stat = _mean
    n = arrays[0].size
    rng = np.random.default_rng(seed)
    chunk = max(1, _CHUNK_CELLS // n)  # resample in blocks: resamples x n indices at once is 1.6 GB at 100k
    values = np.concatenate([np.asarray(stat(*(x[draws] for x in arrays)), dtype=float)
                             for draws in (rng.integers(0, n, size=(min(chunk, resamples - done), n))
                                           for done in range(0, resamples, chunk))])
    tail = (1.0 - level) / 2.0
    return float(np.quantile(values, tail)), float(np.quantile(values, 1.0 - tail))


def _mean(x: np.ndarray) -> np.ndarray:
    return x.mean(axis=1)


def median_of(x: np.ndarray) -> np.ndarray:
    """Per resample: the median (what the bench reports of per-query ratios)."""
    return np.median(x, axis=1)


def nearest_rank(x: np.ndarray, q: float) -> np.ndarray:
    """Per resample: the nearest-rank percentile, as `metrics.percentile` takes it."""
    return np.sort(x, axis=1)[:, rank_index(x.shape[1], q)]


def fusion_margins(rows: Mapping[str, Sequence[tuple[str, Mapping[str, float]]]], arms: Sequence[str],
                   metric: str, *, fused: str = "fused") -> dict[str, dict[str, object]]:
    """Per category, and "overall": the best single arm on `metric`, fused minus it, and the
    interval of that difference (None under `MIN_N` questions). `rows[system]` holds (category,
    metric row) per scored query, in the same query order for every system (the runner scores every
    system on every query)."""
    if fused not in rows or not arms:
        return {}
    n = len(rows[fused])
    if any(len(rows[a]) != n for a in arms):
        raise ValueError("every system must be scored on the same queries to pair them")
    cats = [c for c, _ in rows[fused]]
    values = {s: np.array([r.get(metric, 0.0) for _, r in rows[s]], dtype=float) for s in (fused, *arms)}
    slices = {c: np.array([x == c for x in cats]) for c in dict.fromkeys(cats)}
    slices["overall"] = np.ones(n, dtype=bool)
    out: dict[str, dict[str, object]] = {}
    for name, mask in slices.items():
        if not mask.any():
            continue
        best = max(arms, key=lambda a: float(values[a][mask].mean()))
        diff = values[fused][mask] - values[best][mask]
        ci = [round(b, 4) for b in bootstrap_ci(diff)] if diff.size >= MIN_N else None
        out[name] = {"metric": metric, "best_arm": best, "fused_minus_best": round(float(diff.mean()), 4),
                     "ci95": ci, "n": int(mask.sum())}
    return out
