"""The learned order's model: a linear scorer over `candidate_features`, in numpy, from a JSON file.

    score(x) = Σᵢ wᵢ · (xᵢ − meanᵢ) / scaleᵢ + bias

A logistic regression fitted on (candidate, is it a gold memory?) pairs; its decision function is
all the order needs. The file is small (a few kB), checked when it is loaded (format, feature
version, model family, the numbers' shapes) and refused with a `ConfigurationError` naming the file
and the reason, so a bad file fails when the ensemble is built, never inside a query.

Why linear: on public LoCoMo out of fold it matched what was tried beside it (docs/results.md,
"The learned order"), it costs one matrix-vector product per query, and its explanation is exact:
each feature's share of a candidate's score is wᵢ · zᵢ (`Ranker.top_features`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigurationError
from ..results import ARMS
from .features import FEATURE_VERSION, arms_of, feature_names

__all__ = ["Ranker", "load_ranker", "parse_ranker", "default_ranker", "FORMAT", "FAMILIES", "SHIPPED"]

#: What a ranker file says it is.
FORMAT = "fused-memory-ranker"
#: Model families this version can run.
FAMILIES = ("linear",)
#: The shipped ranker, inside the package.
SHIPPED = "ranker.json"


@dataclass(frozen=True)
class Ranker:
    """A loaded linear ranker. `source` names the file (for errors and explanations); `arms` the
    arms it was trained with, whose columns it reads (`features.feature_names(arms)`): an ensemble
    whose arms it does not know is refused when it is built (`ensemble.learned.resolve_ranker`)."""

    weights: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    bias: float
    source: str
    meta: Any = None
    arms: tuple[str, ...] = ARMS

    @property
    def feature_names(self) -> tuple[str, ...]:
        return feature_names(self.arms)

    def scores(self, x: np.ndarray) -> np.ndarray:
        """One score per row of `x` (higher: better)."""
        return ((x - self.mean) / self.scale) @ self.weights + self.bias

    def top_features(self, row: np.ndarray, n: int = 3) -> tuple[tuple[str, float], ...]:
        """The `n` features that moved this candidate's score most: (name, wᵢ · zᵢ), largest |share| first."""
        share = (row - self.mean) / self.scale * self.weights
        order = np.argsort(-np.abs(share), kind="stable")[:n]
        names = self.feature_names
        return tuple((names[i], float(share[i])) for i in order if share[i] != 0.0)

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "family": "linear", "feature_version": FEATURE_VERSION,
                "features": list(self.feature_names), "weights": [round(float(w), 6) for w in self.weights],
                "mean": [round(float(v), 6) for v in self.mean], "scale": [round(float(v), 6) for v in self.scale],
                "bias": round(float(self.bias), 6), "meta": self.meta or {}}


def _refuse(source: str, reason: str) -> ConfigurationError:
    return ConfigurationError(f"ranker file {source}: {reason}")


def _vector(doc: dict[str, Any], key: str, source: str, n: int) -> np.ndarray:
    value = doc.get(key)
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise _refuse(source, f"{key!r} is not a list of numbers") from None
    if arr.shape != (n,) or not np.all(np.isfinite(arr)):
        raise _refuse(source, f"{key!r} must hold {n} finite numbers")
    return arr


def parse_ranker(doc: Any, source: str) -> Ranker:
    """A `Ranker` from a ranker file's JSON, or the reason it cannot be one."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise _refuse(source, f"not a ranker file (no \"format\": \"{FORMAT}\")")
    if doc.get("feature_version") != FEATURE_VERSION:
        raise _refuse(source, f"feature version {doc.get('feature_version')!r}, this fused-memory computes "
                              f"{FEATURE_VERSION!r}: train it again (fused-memory train-ranker)")
    if doc.get("family") not in FAMILIES:
        raise _refuse(source, f"model family {doc.get('family')!r} cannot run here (families: {', '.join(FAMILIES)})")
    names = doc.get("features")
    arms = arms_of(names) if isinstance(names, list) and all(isinstance(n, str) for n in names) else None
    if arms is None:
        raise _refuse(source, "its feature names differ from this version's")
    n = len(feature_names(arms))
    scale = _vector(doc, "scale", source, n)
    if np.any(scale <= 0):
        raise _refuse(source, "'scale' must be positive")
    bias = doc.get("bias", 0.0)
    if isinstance(bias, bool) or not isinstance(bias, (int, float)) or not np.isfinite(bias):
        raise _refuse(source, "'bias' must be a finite number")
    vectors = (_vector(doc, "weights", source, n), _vector(doc, "mean", source, n), scale)
    for v in vectors:
        v.flags.writeable = False  # the shipped ranker is shared by every ensemble of the process
    return Ranker(*vectors, float(bias), source, doc.get("meta"), arms)


def load_ranker(path: str | os.PathLike[str]) -> Ranker:
    """Read and check a ranker file; `ConfigurationError` naming the file and the reason if it is
    missing, unreadable, not JSON, of another feature version or model family."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise _refuse(source, f"cannot be read ({type(exc).__name__}: {exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise _refuse(source, "is not UTF-8 text") from None
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise _refuse(source, f"is not JSON ({exc})") from None
    return parse_ranker(doc, source)


@lru_cache(maxsize=1)
def default_ranker() -> Ranker:
    """The ranker shipped in the package (read once per process)."""
    ref = resources.files(__package__).joinpath(SHIPPED)
    try:
        doc = json.loads(ref.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise _refuse(f"fused_memory/ranking/{SHIPPED}", f"the shipped ranker cannot be read ({exc})") from None
    return parse_ranker(doc, f"fused_memory/ranking/{SHIPPED}")
