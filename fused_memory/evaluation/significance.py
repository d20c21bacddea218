"""How sure a margin is: fused minus the best single arm, with a paired bootstrap interval.

Issue 6 asks that fusion beat the best single arm by 5 points in every category. On LoCoMo's public
split a category has 44-418 questions, so one question moves a category's Recall@5 by 0.2-2.3
points: a margin printed without its spread cannot say whether a category is behind the target or
merely small. The interval is the percentile bootstrap of the mean per-query difference (fused's
metric minus the arm's on the same question, resampled together, so what the two systems share
cancels), the standard check for a paired IR comparison. The best arm is chosen on the same
questions, which favours it: the interval is, if anything, unkind to fusion.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["bootstrap_ci", "fusion_margins", "LEVEL", "RESAMPLES"]

LEVEL = 0.95
#: 2,000 resamples put the 2.5% and 97.5% quantiles within ~0.2 points of their limit on LoCoMo's
#: category sizes; the seed is fixed so a report is reproducible.
RESAMPLES = 2000


def bootstrap_ci(values: Sequence[float], *, level: float = LEVEL, resamples: int = RESAMPLES,
                 seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of `values` (one value per query)."""
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or x.size == 0:
        raise ValueError("bootstrap_ci needs at least one value")
    if not 0.0 < level < 1.0 or resamples < 1:
        raise ValueError(f"level must be in (0, 1) and resamples >= 1, got {level!r}, {resamples!r}")
    draws = np.random.default_rng(seed).integers(0, x.size, size=(resamples, x.size))
    means = x[draws].mean(axis=1)
    tail = (1.0 - level) / 2.0
    return float(np.quantile(means, tail)), float(np.quantile(means, 1.0 - tail))


def fusion_margins(rows: Mapping[str, Sequence[tuple[str, Mapping[str, float]]]], arms: Sequence[str],
                   metric: str, *, fused: str = "fused") -> dict[str, dict[str, object]]:
    """Per category, and "overall": the best single arm on `metric`, fused minus it, and the
    interval of that difference. `rows[system]` holds (category, metric row) per scored query, in
    the same query order for every system (the runner scores every system on every query)."""
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
        lo, hi = bootstrap_ci(diff)
        out[name] = {"metric": metric, "best_arm": best, "fused_minus_best": round(float(diff.mean()), 4),
                     "ci95": [round(lo, 4), round(hi, 4)], "n": int(mask.sum())}
    return out
