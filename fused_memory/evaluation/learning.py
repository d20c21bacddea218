"""Training the learned order, and scoring it against RRF out of fold, from captured candidates.

Everything here reads `candidates.Replayed` queries, so it runs in seconds: fusion is pure (`fuse`
re-fuses a query's arm lists under any k and weights), and the features are the ones the ensemble
computes at query time (`ranking.candidate_features`).

* `fit_ranker`: a logistic regression over (candidate, is it gold?) for the fused top `depth` of
  every training query; scikit-learn, from the `[train]` extra, imported only here and only when
  called (`import fused_memory` never loads it).
* `rrf_grid` / `best_rrf`: RRF's k and weights, re-tuned on training queries with the grid that chose
  the defaults (docs/results.md, "Fusion: RRF k and the weights").
* `leave_one_out`: per conversation, fit the ranker and re-tune RRF on the others, score both on it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..config import DEFAULT_RRF_K, DEFAULT_WEIGHTS
from ..ensemble.fusion import FusedScore, fuse
from ..errors import FusedMemoryError
from ..ranking.features import candidate_features, feature_names
from ..ranking.model import Ranker
from ..ranking.order import applies, learned_order
from ..results import ARMS
from .candidates import Replayed
from .metrics import recall_at_k

__all__ = ["RrfSetting", "DEFAULT_RRF", "fused_list", "Rows", "training_rows", "fit_ranker", "OBJECTIVES", "rrf_grid",
           "best_rrf", "ranked_ids", "recalls", "choose_c", "leave_one_out", "FoldResult", "TrainingError"]


class TrainingError(FusedMemoryError):
    """The training data cannot fit a ranker (no query with a gold memory among its candidates, or
    only gold ones), or the `[train]` extra is not installed."""


@dataclass(frozen=True)
class RrfSetting:
    """RRF's k and base weights (the plan's per-query weights multiply these, as in the ensemble)."""

    k: int
    weights: tuple[tuple[str, float], ...]

    def weight_map(self) -> dict[str, float]:
        return dict(self.weights)


DEFAULT_RRF = RrfSetting(DEFAULT_RRF_K, tuple(DEFAULT_WEIGHTS.items()))


def fused_list(q: Replayed, rrf: RrfSetting, limit: int | None = None) -> list[FusedScore]:
    """RRF's ranking of one captured query, as `ensemble._finish` weights it (base x plan)."""
    base = rrf.weight_map()
    weights = {a: base.get(a, 1.0) * q.plan.weight(a) for a in q.results}
    return fuse(q.results, weights, rrf.k, limit=limit)


@dataclass(frozen=True)
class Rows:
    """Training rows: features, labels (1: a gold memory) and the query each row belongs to (a
    pairwise objective compares rows of one query only)."""

    x: np.ndarray
    y: np.ndarray
    query: np.ndarray

    def __iter__(self):  # noqa: ANN204 - (x, y), as the rows were returned before they knew their queries
        return iter((self.x, self.y))


def training_rows(queries: Iterable[Replayed], rrf: RrfSetting = DEFAULT_RRF, depth: int = 30,
                  arms: tuple[str, ...] = ARMS) -> Rows:
    """Features and labels (1: a gold memory) of the fused top `depth` of every query whose top
    `depth` holds a gold memory (the others teach the order nothing); `arms` the arms whose
    columns the features hold (the registry's, `retrievers.registry`)."""
    xs, ys, qs = [], [], []
    for n, q in enumerate(queries):
        if not applies(q.plan, q.parsed):  # the queries the ensemble leaves in RRF's order
            continue
        head = fused_list(q, rrf, depth)
        y = np.array([1.0 if f.memory_id in q.gold else 0.0 for f in head])
        if not y.any() or y.all():
            continue
        xs.append(candidate_features(head, q.results, q.plan, q.parsed, arms))
        ys.append(y)
        qs.append(np.full(len(y), n))
    if not xs:
        raise TrainingError("no training query has a gold memory among its fused candidates")
    return Rows(np.vstack(xs), np.concatenate(ys), np.concatenate(qs))


#: The objectives a ranker can be fitted with: "pointwise" (logistic regression on each candidate:
#: is it gold?) or "pairwise" (logistic regression on the difference of a gold and a non-gold
#: candidate of one query: which ranks first?). Both give a linear scorer run the same way.
OBJECTIVES = ("pointwise", "pairwise")
#: Non-gold candidates a gold one is paired with, per query (the pairwise objective).
_PAIRS_PER_GOLD = 30


def fit_ranker(x: np.ndarray | Rows, y: np.ndarray | None = None, *, c: float = 1.0,
               meta: Mapping[str, Any] | None = None, mask: Sequence[str] | None = None,
               objective: str = "pointwise", arms: tuple[str, ...] = ARMS) -> Ranker:
    """A linear scorer over standardized features, fitted by `objective` (`OBJECTIVES`). `mask`
    names features held at 0 weight (the ablation); `arms` those the rows were built for."""
    try:
        from sklearn.linear_model import LogisticRegression
    except ImportError:
        raise TrainingError("training a ranker needs scikit-learn: pip install 'fused-memory[train]'") from None
    if objective not in OBJECTIVES:
        raise TrainingError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    rows = x if isinstance(x, Rows) else Rows(x, y if y is not None else np.zeros(len(x)), np.zeros(len(x)))
    mean = rows.x.mean(axis=0)
    scale = rows.x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = (rows.x - mean) / scale
    names = feature_names(arms)
    if rows.x.shape[1] != len(names):
        raise TrainingError(f"the rows hold {rows.x.shape[1]} features, the arms {list(arms)} have {len(names)}")
    keep = np.ones(len(names), dtype=bool)
    for name in mask or ():
        keep[names.index(name)] = False
    if keep.sum() == 0 or len(set(rows.y.tolist())) < 2:
        raise TrainingError("training needs gold and non-gold candidates and at least one feature")
    w = np.zeros(len(names))
    if objective == "pointwise":
        model = LogisticRegression(C=c, max_iter=2000)
        model.fit(z[:, keep], rows.y)
        w[keep] = model.coef_[0]
        bias = float(model.intercept_[0])
    else:
        diffs = _pairs(z[:, keep], rows.y, rows.query)
        model = LogisticRegression(C=c, max_iter=2000, fit_intercept=False)
        model.fit(np.vstack([diffs, -diffs]), np.r_[np.ones(len(diffs)), np.zeros(len(diffs))])
        w[keep] = model.coef_[0]
        bias = 0.0
    return Ranker(w, mean, scale, bias, "trained", {**dict(meta or {}), "objective": objective}, tuple(arms))


def _pairs(z: np.ndarray, y: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Gold minus non-gold rows of one query each, every gold with its query's first non-gold ones
    (rows come in fused order: the near misses first)."""
    out = []
    for q in np.unique(query):
        idx = np.flatnonzero(query == q)
        gold, other = idx[y[idx] == 1], idx[y[idx] == 0][:_PAIRS_PER_GOLD]
        if len(gold) and len(other):
            out.append((z[gold][:, None, :] - z[other][None, :, :]).reshape(-1, z.shape[1]))
    if not out:
        raise TrainingError("no query has both gold and non-gold candidates to pair")
    return np.vstack(out)


def ranked_ids(q: Replayed, rrf: RrfSetting, ranker: Ranker | None, depth: int = 30, k: int = 10) -> list[str]:
    """The top `k` ids of one query: RRF's order, or the learned order over RRF's top `depth`."""
    head = fused_list(q, rrf, max(depth, k))
    if ranker is not None and applies(q.plan, q.parsed):
        head, _ = learned_order(ranker, head, q.results, q.plan, q.parsed, depth)
    return [f.memory_id for f in head[:k]]


def recalls(q: Replayed, ids: Sequence[str], ks: Sequence[int] = (5, 10)) -> tuple[float, ...]:
    return tuple(float(recall_at_k(ids, q.gold, k) or 0.0) for k in ks)


#: Each arm's weights in the grid, around the defaults (docs/results.md, "Fusion: RRF k and the weights");
#: an arm the registry adds is tried at `_OTHER_WEIGHTS`.
_GRID_WEIGHTS: Mapping[str, tuple[float, ...]] = {
    "dense": (1.0, 1.5, 2.0), "lexical": (1.5, 2.0, 2.5), "graph": (0.25, 0.5, 1.0), "temporal": (0.5, 1.0),
    "type": (0.5, 1.0)}
_OTHER_WEIGHTS = (0.5, 1.0)
_GRID_K = (5, 10, 20, 60)


def rrf_grid(arms: tuple[str, ...] = ARMS) -> list[RrfSetting]:
    """The grid of RRF k and arm weights around the defaults, for `arms` (the registry's)."""
    choices = [_GRID_WEIGHTS.get(a, _OTHER_WEIGHTS) for a in arms]
    return [RrfSetting(k, tuple(zip(arms, ws, strict=True)))
            for k in _GRID_K for ws in itertools.product(*choices)]


def grid_scores(queries: Sequence[Replayed], grid: Sequence[RrfSetting],
                progress: Callable[[str], None] = lambda _: None) -> np.ndarray:
    """R@5 of every query under every setting: shape (len(grid), len(queries))."""
    out = np.zeros((len(grid), len(queries)))
    for i, setting in enumerate(grid):
        for j, q in enumerate(queries):
            out[i, j] = recalls(q, ranked_ids(q, setting, None, k=5), (5,))[0]
        if (i + 1) % 50 == 0:
            progress(f"RRF grid {i + 1}/{len(grid)}")
    return out


def best_rrf(grid: Sequence[RrfSetting], scores: np.ndarray, train: np.ndarray) -> RrfSetting:
    """The setting with the best mean R@5 over the training queries (`train`: a boolean mask)."""
    means = scores[:, train].mean(axis=1)
    return grid[int(np.argmax(means))]


@dataclass(frozen=True)
class FoldResult:
    conversation: str
    rrf: RrfSetting
    ranker: Ranker
    #: query id -> ((R@5, R@10) RRF, (R@5, R@10) learned)
    per_query: Mapping[str, tuple[tuple[float, ...], tuple[float, ...]]]


def choose_c(queries: Sequence[Replayed], rrf: RrfSetting, cs: Sequence[float], depth: int = 30,
             mask: Sequence[str] | None = None, objective: str = "pointwise",
             extra: Sequence[Replayed] = ()) -> float:
    """The regularization, chosen inside the training queries alone: leave one conversation out
    among them, the C with the best mean R@5 + R@10 (ties: the smaller C, the simpler model).
    `extra` queries (other sets) train every fold and are never scored."""
    convs = sorted({q.conversation_id for q in queries})
    if len(cs) == 1 or len(convs) < 2:
        return cs[0]
    rows = {conv: training_rows([*[q for q in queries if q.conversation_id != conv], *extra], rrf, depth)
            for conv in convs}
    best, best_score = cs[0], -1.0
    for c in sorted(cs):
        total = 0.0
        for conv in convs:
            ranker = fit_ranker(rows[conv], c=c, mask=mask, objective=objective)
            total += sum(sum(recalls(q, ranked_ids(q, rrf, ranker, depth)))
                         for q in queries if q.conversation_id == conv)
        if total > best_score + 1e-9:
            best, best_score = c, total
    return best


def leave_one_out(queries: Sequence[Replayed], *, depth: int = 30, c: float | Sequence[float] = 1.0,
                  mask: Sequence[str] | None = None, grid: Sequence[RrfSetting] | None = None,
                  scores: np.ndarray | None = None, progress: Callable[[str], None] = lambda _: None,
                  objective: str = "pointwise", extra: Sequence[Replayed] = ()) -> list[FoldResult]:
    """One fold per conversation: RRF re-tuned and the ranker fitted on the other conversations
    (the ranker over the re-tuned RRF's candidates; several `c`: the regularization chosen by
    `choose_c` on those conversations too), both scored on the held-out one. `extra` queries
    (other labelled sets) join every fold's training for the ranker, never its scoring."""
    grid = list(grid if grid is not None else rrf_grid())
    if scores is None:
        scores = grid_scores(queries, grid, progress)
    convs = sorted({q.conversation_id for q in queries})
    out = []
    for conv in convs:
        test = np.array([q.conversation_id == conv for q in queries])
        rrf = best_rrf(grid, scores, ~test)
        train = [q for q, t in zip(queries, test, strict=True) if not t]
        chosen = choose_c(train, rrf, tuple(c) if isinstance(c, Sequence) else (c,), depth, mask, objective, extra)
        ranker = fit_ranker(training_rows([*train, *extra], rrf, depth), c=chosen, mask=mask, meta={"c": chosen},
                            objective=objective)
        per = {}
        for q, t in zip(queries, test, strict=True):
            if t:
                per[q.query_id] = (recalls(q, ranked_ids(q, rrf, None, depth)),
                                   recalls(q, ranked_ids(q, rrf, ranker, depth)))
        out.append(FoldResult(conv, rrf, ranker, per))
        progress(f"fold {conv}: k={rrf.k} {rrf.weight_map()} C={chosen}")
    return out
