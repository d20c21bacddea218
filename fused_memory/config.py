"""Configuration values. Plain frozen dataclasses so a config can be logged, compared and reused."""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from .errors import ConfigurationError
from .results import ARMS

__all__ = ["FusionConfig", "StoreConfig", "DEFAULT_WEIGHTS", "DEFAULT_TIMEOUTS_S", "DEFAULT_RRF_K"]

#: Base weights, tuned on the public LoCoMo split (docs/RESULTS.md has the sweep). DESIGN.md's seed
#: was 1.0 for every arm; measured against it, lexical 2.0 (+4.1 R@5: BM25 alone is 0.547 R@5 on chat
#: turns, MiniLM dense 0.371) and graph/temporal/type 0.5 (those arms mostly re-rank what dense
#: already found) give +6.2 R@5 together with k=10. Dense went to 1.5 once the vector arms embed
#: the query without hub names (`optimizer.mask_hub_names`, dense alone 0.446 -> 0.596): fused R@5
#: at dense 1.0 / 1.25 / 1.5 / 1.75 / 2.0 was 0.727 / 0.729 / 0.736 / 0.733 / 0.723, lexical 1.75-2.0
#: within 0.2 points. The optimizer multiplies these per query (a window x3, "when did...?" temporal
#: x2; the graph arm discounts its own multi-hop hits x0.8).
DEFAULT_WEIGHTS: Mapping[str, float] = MappingProxyType(
    {"dense": 1.5, "lexical": 2.0, "graph": 0.5, "temporal": 0.5, "type": 0.5})

#: RRF constant. DESIGN.md seeds 60; on public LoCoMo with the weights above, k=10 measured +1.4 R@5
#: and +2.5 R@10 over k=60 (k=30 in between): a smaller k lets a confident #1 count for more.
DEFAULT_RRF_K = 10

#: Per-arm timeouts. Generous for in-process arms (they answer in milliseconds; the timeout only
#: exists to bound a pathological case), shorter for network arms where a dead server must not stall.
DEFAULT_TIMEOUTS_S: Mapping[str, float] = MappingProxyType(
    {"dense": 2.0, "lexical": 2.0, "graph": 2.0, "temporal": 2.0, "type": 2.0})


@dataclass(frozen=True)
class FusionConfig:
    """How the ensemble fuses: RRF constant `k`, arm weights, per-arm timeouts, how deep each arm
    fetches candidates (`depth`), `widen_below`: a type-filtered arm returning fewer results than
    this is rerun on all types, and `pool_min` (below). `weights` and `timeouts_s` may name a
    custom arm given to `EnsembleMemory(arms=...)` (unnamed arms: weight 1.0, timeout 2 s)."""

    k: int = DEFAULT_RRF_K
    weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    timeouts_s: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_TIMEOUTS_S))
    depth: int = 50
    widen_below: int = 5
    max_query_chars: int = 10_000
    #: A vector arm whose search only adds keyword conditions to dense's (the type arm's types, the
    #: scoped graph's hub names, the "when" arm's time tag) is read off dense's top `depth` when that
    #: holds at least this many matches, instead of a filtered engine search of its own
    #: (`store.pooling`: exact under exact search, so only the arm's tail below rank `pool_min` is
    #: lost). 0 sends every search to the engine. Public LoCoMo R@5 at 0 / 10 / 20 / 30 / 50:
    #: 0.7456 / 0.7451 / 0.7451 / 0.7456 / 0.7456 (at 10-20 one multi-hop question lost a turn);
    #: at 100k memories 30 reads the type arm off dense for 84 of the bench's 112 hinted queries
    #: (10: 91) with the same top 10 as 0 on all 200 queries (docs/RESULTS.md).
    pool_min: int = 30

    def __post_init__(self) -> None:
        for name, minimum in (("k", 0), ("depth", 1), ("widen_below", 0), ("max_query_chars", 1), ("pool_min", 0)):
            value = getattr(self, name)  # "5", 1.5 and True were taken, then failed inside a query
            if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < minimum:
                raise ConfigurationError(f"{name} must be an integer >= {minimum}, got {value!r}")
            object.__setattr__(self, name, int(value))  # numpy's integers too, as check_options takes k
        for name, table in (("weights", self.weights), ("timeouts_s", self.timeouts_s)):
            if not isinstance(table, Mapping):
                raise ConfigurationError(f"{name} must be a mapping of arm name to number, got {table!r}")
            # a custom arm's name is allowed here; EnsembleMemory refuses a name it has no arm for
            # (a typo such as "lexcial" still fails when the ensemble is built, not in a query)
            unnamed = [a for a in table if not isinstance(a, str) or not a.strip()]
            if unnamed:
                raise ConfigurationError(f"{name} keys must be arm names, got {unnamed!r}")
            for arm, v in table.items():
                try:
                    number = float(v) if not isinstance(v, (bool, str)) else math.nan
                except (TypeError, ValueError):
                    number = math.nan
                if not (number >= 0.0):
                    raise ConfigurationError(f"{name}[{arm}] must be a number >= 0, got {v!r}")
                if name == "weights" and not math.isfinite(number):  # an infinite timeout means "wait"
                    raise ConfigurationError(f"weights[{arm}] must be a finite number, got {v!r}")
        merged_w = {**DEFAULT_WEIGHTS, **{a: float(v) for a, v in self.weights.items()}}
        merged_t = {**DEFAULT_TIMEOUTS_S, **{a: float(v) for a, v in self.timeouts_s.items()}}
        object.__setattr__(self, "weights", MappingProxyType(merged_w))
        object.__setattr__(self, "timeouts_s", MappingProxyType(merged_t))

    def check_arms(self, custom: frozenset[str] = frozenset()) -> None:
        """Refuse a weight or timeout for an arm that is neither one of the five nor in `custom`
        (a typo such as "lexcial" would otherwise be ignored, its arm left at the default)."""
        unknown = sorted((set(self.weights) | set(self.timeouts_s)) - set(ARMS) - custom)
        if unknown:
            raise ConfigurationError(f"unknown arm(s) in weights or timeouts_s: {unknown}; arms are {ARMS}"
                                     + (f" and the custom arms given ({sorted(custom)})" if custom else ""))

    def with_(self, **changes: object) -> FusionConfig:
        return replace(self, **changes)  # type: ignore[arg-type]

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> FusionConfig:
        """FUSED_MEMORY_RRF_K, FUSED_MEMORY_DEPTH, FUSED_MEMORY_WIDEN_BELOW, FUSED_MEMORY_POOL_MIN,
        FUSED_MEMORY_WEIGHT_<ARM>, FUSED_MEMORY_TIMEOUT_<ARM> (seconds)."""
        env = os.environ if env is None else env
        kw: dict[str, object] = {}
        try:
            if "FUSED_MEMORY_RRF_K" in env:
                kw["k"] = int(env["FUSED_MEMORY_RRF_K"])
            if "FUSED_MEMORY_DEPTH" in env:
                kw["depth"] = int(env["FUSED_MEMORY_DEPTH"])
            if "FUSED_MEMORY_WIDEN_BELOW" in env:
                kw["widen_below"] = int(env["FUSED_MEMORY_WIDEN_BELOW"])
            if "FUSED_MEMORY_POOL_MIN" in env:
                kw["pool_min"] = int(env["FUSED_MEMORY_POOL_MIN"])
            kw["weights"] = {a: float(env[f"FUSED_MEMORY_WEIGHT_{a.upper()}"])
                             for a in ARMS if f"FUSED_MEMORY_WEIGHT_{a.upper()}" in env}
            kw["timeouts_s"] = {a: float(env[f"FUSED_MEMORY_TIMEOUT_{a.upper()}"])
                                for a in ARMS if f"FUSED_MEMORY_TIMEOUT_{a.upper()}" in env}
        except ValueError as exc:
            raise ConfigurationError(f"bad FUSED_MEMORY_* environment value: {exc}") from None
        return cls(**kw)  # type: ignore[arg-type]


@dataclass(frozen=True)
class StoreConfig:
    """Where the store keeps its data. `path` for the embedded default; URLs for scale-out."""

    path: str | None = None
    qdrant_url: str | None = None
    qdrant_api_key: str | None = None
    qdrant_collection: str = "fused_memory"
    qdrant_location: str | None = None  # ":memory:" or a folder: qdrant-client local mode (tests)
    neo4j_uri: str | None = None
    neo4j_auth: tuple[str, str] | None = None
    neo4j_database: str | None = None
    graph_dialect: str | None = None  # "neo4j" | "falkordb"; None = detect from the server
    ner: bool = True
    show_progress: bool | None = None  # None: a bar only for large batches on a TTY

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> StoreConfig:
        env = os.environ if env is None else env
        auth = None
        if env.get("FUSED_MEMORY_NEO4J_USER"):
            auth = (env["FUSED_MEMORY_NEO4J_USER"], env.get("FUSED_MEMORY_NEO4J_PASSWORD", ""))
        return cls(path=env.get("FUSED_MEMORY_PATH"), qdrant_url=env.get("FUSED_MEMORY_QDRANT_URL"),
                   qdrant_api_key=env.get("FUSED_MEMORY_QDRANT_API_KEY"),
                   neo4j_uri=env.get("FUSED_MEMORY_NEO4J_URI"), neo4j_auth=auth)
