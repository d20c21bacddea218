"""Configuration values. Plain frozen dataclasses so a config can be logged, compared and reused."""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from .enums import StrEnum, member
from .errors import ConfigurationError
from .results import ARMS

__all__ = ["FusionConfig", "Order", "LexicalIndex", "StoreConfig", "DEFAULT_WEIGHTS", "DEFAULT_TIMEOUTS_S",
           "DEFAULT_RRF_K", "DEFAULT_RECENCY_WEIGHT", "DEFAULT_CURRENT_STATE_RECENCY", "DEFAULT_HALF_LIFE_DAYS",
           "DEFAULT_RECENCY_BAND", "DEFAULT_DUPLICATE_COSINE", "RESERVED_NAMES", "LEXICAL_MODES", "ORDERS"]

class Order(StrEnum):
    """How the fused candidates are ordered (`FusionConfig.order`)."""

    LEARNED = "learned"
    RRF = "rrf"


class LexicalIndex(StrEnum):
    """Where the lexical arm's index lives (`StoreConfig.lexical`)."""

    ENGINE = "engine"
    BM25 = "bm25"


#: `Order`'s values, as callers pass them.
ORDERS: tuple[str, ...] = tuple(o.value for o in Order)

#: `LexicalIndex`'s values, as callers pass them.
LEXICAL_MODES: tuple[str, ...] = tuple(m.value for m in LexicalIndex)

#: Base weights, tuned on the public LoCoMo split (docs/decisions/0001-rrf-k-and-weights.md): BM25 is
#: the strongest single arm on chat turns; dense counts 1.5 as the vector arms embed the query
#: without hub names (`optimizer.mask_hub_names`); graph, temporal and type mostly re-rank what dense
#: already found. The optimizer multiplies these per query (a window x3, "when did...?" temporal x2:
#: docs/decisions/0002-per-query-weights.md; the graph arm discounts its own multi-hop hits x0.8).
DEFAULT_WEIGHTS: Mapping[str, float] = MappingProxyType(
    {"dense": 1.5, "lexical": 2.0, "graph": 0.5, "temporal": 0.5, "type": 0.5})

#: RRF constant: a smaller k lets a confident #1 count for more (docs/decisions/0001-rrf-k-and-weights.md).
DEFAULT_RRF_K = 10

#: Per-arm timeouts. Generous for in-process arms (they answer in milliseconds; the timeout only
#: exists to bound a pathological case), shorter for network arms where a dead server must not stall.
DEFAULT_TIMEOUTS_S: Mapping[str, float] = MappingProxyType(
    {"dense": 2.0, "lexical": 2.0, "graph": 2.0, "temporal": 2.0, "type": 2.0})

#: The recency list's weight on a query the optimizer finds about the current state ("now",
#: "currently", "still"...: `optimizer.current_state_recency`), and on any other query about the
#: present. See the fields for how they were chosen.
DEFAULT_CURRENT_STATE_RECENCY = 8.0
DEFAULT_RECENCY_WEIGHT = 0.0
#: Half-life of the recency signal: a memory this old counts half as recent as one stated now
#: (docs/decisions/0025-recency-list.md).
DEFAULT_HALF_LIFE_DAYS = 365.0
#: How much less similar to the query than the best candidate a memory may be and still be ordered
#: by recency (a cosine difference).
DEFAULT_RECENCY_BAND = 0.1
#: Two memories whose stored vectors have at least this cosine (and the same values, negations and
#: words but one: `ensemble.duplicates.same_content`) are near-duplicates
#: (docs/decisions/0027-near-duplicate-collapse.md).
DEFAULT_DUPLICATE_COSINE = 0.92
#: Kept for compatibility: versions of a fact are found by slot, never by similarity, and no step
#: reads this (docs/decisions/0026-versions-by-slot.md).
DEFAULT_VERSION_COSINE = 0.4
#: Names the stage after fusion uses in contributions and failures; no custom arm may take them.
RESERVED_NAMES: frozenset[str] = frozenset({"recency", "near window", "slot", "rerank", "collapse", "learned"})


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
    #: (`backends.vector.pooling`: exact under exact search, so only the arm's tail below rank `pool_min` is
    #: lost). 0 sends every search to the engine (docs/decisions/0003-depth-widening-pool-min.md).
    pool_min: int = 30
    # ------------------------------------------------------------------ after fusion (`ensemble.after_fusion`)
    #: Weight of the recency list (the contenders ranked by exp. decay of their age: `event_at`, else
    #: `created_at`) fused with the arms' lists on a question the optimizer finds about the current
    #: state ("where do I live now?": `optimizer.current_state_recency`); 0 turns that off
    #: (docs/decisions/0025-recency-list.md).
    current_state_recency: float = DEFAULT_CURRENT_STATE_RECENCY
    #: The recency list's weight on every other query about the present (none that names a past time
    #: or asks when). 0: on public LoCoMo every weight tried cost some category more than the bound,
    #: and nothing of the churn set needs it (docs/decisions/0025-recency-list.md).
    recency_weight: float = DEFAULT_RECENCY_WEIGHT
    recency_half_life_days: float = DEFAULT_HALF_LIFE_DAYS
    #: The recency list holds the candidates whose dense cosine to the query is within this of the
    #: best candidate's (`ensemble.recency.contenders`); None: every candidate
    #: (docs/decisions/0025-recency-list.md).
    recency_band: float | None = DEFAULT_RECENCY_BAND
    #: A newer memory with the same predicate as an older one in the result outranks it
    #: (`ensemble.recency.supersede`), unless the query names a time or asks when.
    supersede: bool = True
    #: Cosine of stored vectors at or above which two memories without a slot key, the newer naming a
    #: value the older does not, are versions of one fact (`ensemble.versions`); None: keyed versions
    #: only (no vector read).
    version_cosine: float | None = DEFAULT_VERSION_COSINE
    #: Near-duplicates in the result collapse into one hit, the newest (`ensemble.duplicates`).
    collapse: bool = True
    #: Cosine of stored vectors at or above which two memories are near-duplicates; None: equal
    #: normalized text only (no vector read).
    duplicate_cosine: float | None = DEFAULT_DUPLICATE_COSINE
    #: Maximal marginal relevance over the result: lambda * relevance - (1 - lambda) * similarity to the
    #: hits above; None: off, because it measured worse (docs/decisions/0028-mmr-off.md).
    mmr_lambda: float | None = None
    #: How far down the fused ranking the stage after fusion reads (at least `k`, whatever `k` is):
    #: one candidate window for every step, so the first answer does not depend on `k` (collapse reads
    #: further when copies leave it short; docs/decisions/0024-after-fusion-window-and-steps.md).
    after_depth: int = 20
    #: How many of the top hits a reranker reorders; its answer is waited for `rerank_timeout_s`.
    rerank_depth: int = 20
    rerank_timeout_s: float = 5.0
    #: Final order of the reranked hits: by blend * 1/(k + rerank rank) + (1 - blend) * 1/(k + fused
    #: rank). 1: the reranker's order; 0: the fused order (the reranker's scores only shown).
    rerank_blend: float = 1.0
    #: A floor on a hit's fused score (`retrieve(min_score=)` per call). 0: every hit that some arm
    #: scored above 0; a memory every arm scored 0 (the vector arm returns its whole depth, unrelated
    #: memories included) is never a hit. Fused scores are not calibrated across queries (one arm's
    #: #1 is 0.14 to 0.18 at the default weights), so a floor is a caller's choice, not a default.
    min_score: float = 0.0
    # ------------------------------------------------------------------ the order of the fused candidates
    #: "learned" (the default): the fused top `learned_depth` reordered by the ranker
    #: (`fused_memory.ranking`, a small linear model over each candidate's evidence, the shipped one
    #: unless `ranker` or `EnsembleMemory(ranker=)` gives another;
    #: docs/decisions/0029-learned-order-by-default.md); "rrf": score-weighted RRF's order. None reads
    #: as "learned". Either way the stage after fusion and a reranker follow.
    order: str | None = "learned"
    ranker: str | None = None
    #: How many of the fused candidates the learned order reorders (the rest keep RRF's order), chosen
    #: with C out of fold on public LoCoMo (docs/decisions/0029-learned-order-by-default.md).
    learned_depth: int = 30

    def __post_init__(self) -> None:
        self._check_after()
        if self.order is not None and self.order not in ORDERS:
            raise ConfigurationError(f"order must be one of {', '.join(map(repr, ORDERS))} or None, "
                                     f"got {self.order!r}")
        object.__setattr__(self, "order", member(Order, self.order or Order.LEARNED, "order", ConfigurationError))
        if self.ranker is not None and not isinstance(self.ranker, (str, os.PathLike)):
            raise ConfigurationError(f"ranker must be a path to a ranker file or None, got {self.ranker!r}")
        for name, minimum in (("k", 0), ("depth", 1), ("learned_depth", 1), ("widen_below", 0), ("max_query_chars", 1),
                              ("pool_min", 0),
                              ("after_depth", 1), ("rerank_depth", 1)):
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

    def _check_after(self) -> None:
        """The settings of the stage after fusion: each number in its range (stored as a float), each
        switch a bool. A string or a NaN was taken, then failed inside a query."""
        ranges = {  # name: (lowest, lowest allowed?, highest, None allowed?)
            "recency_weight": (0.0, True, math.inf, False), "recency_half_life_days": (0.0, False, math.inf, False),
            "current_state_recency": (0.0, True, math.inf, False),
            "recency_band": (0.0, True, 2.0, True),
            "duplicate_cosine": (-1.0, True, 1.0, True), "mmr_lambda": (0.0, True, 1.0, True),
            "version_cosine": (-1.0, True, 1.0, True),
            "rerank_timeout_s": (0.0, False, math.inf, False), "rerank_blend": (0.0, True, 1.0, False),
            "min_score": (0.0, True, math.inf, False),
        }
        for name, (low, closed, high, optional) in ranges.items():
            value = getattr(self, name)
            if value is None and optional:
                continue
            number = float(value) if isinstance(value, numbers.Real) and not isinstance(value, bool) else math.nan
            finite = math.isfinite(number) or (name == "rerank_timeout_s" and number == math.inf)  # inf: wait
            if not finite or not (low <= number if closed else low < number) or number > high:
                span = (f"{'>=' if closed else '>'} {low:g}" if high == math.inf
                        else f"in [{low:g}, {high:g}]")
                raise ConfigurationError(f"{name} must be a number {span}{' or None' if optional else ''}, "
                                         f"got {value!r}")
            object.__setattr__(self, name, number)
        for name in ("supersede", "collapse"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigurationError(f"{name} must be True or False, got {getattr(self, name)!r}")

    def check_arms(self, custom: frozenset[str] = frozenset()) -> None:
        """Refuse a weight or timeout for an arm that is neither one of the five nor in `custom`
        (a typo such as "lexcial" would otherwise be ignored, its arm left at the default), and a
        custom arm under a name the stage after fusion uses ("recency", "rerank")."""
        taken = sorted(custom & RESERVED_NAMES)
        if taken:
            raise ConfigurationError(f"custom arm name(s) {taken} are reserved: explanations and failures use "
                                     f"{sorted(RESERVED_NAMES)} for the stage after fusion")
        unknown = sorted((set(self.weights) | set(self.timeouts_s)) - set(ARMS) - custom)
        if unknown:
            raise ConfigurationError(f"unknown arm(s) in weights or timeouts_s: {unknown}; arms are {ARMS}"
                                     + (f" and the custom arms given ({sorted(custom)})" if custom else ""))

    def with_(self, **changes: object) -> FusionConfig:
        return replace(self, **changes)  # type: ignore[arg-type]

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> FusionConfig:
        """FUSED_MEMORY_RRF_K, FUSED_MEMORY_DEPTH, FUSED_MEMORY_WIDEN_BELOW, FUSED_MEMORY_POOL_MIN,
        FUSED_MEMORY_WEIGHT_<ARM>, FUSED_MEMORY_TIMEOUT_<ARM> (seconds), FUSED_MEMORY_RECENCY_WEIGHT,
        FUSED_MEMORY_RECENCY_HALF_LIFE_DAYS, FUSED_MEMORY_CURRENT_STATE_RECENCY, FUSED_MEMORY_RERANK_TIMEOUT
        (seconds), FUSED_MEMORY_MIN_SCORE."""
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
            for key, name in (("RECENCY_WEIGHT", "recency_weight"), ("RERANK_TIMEOUT", "rerank_timeout_s"),
                              ("RECENCY_HALF_LIFE_DAYS", "recency_half_life_days"),
                              ("CURRENT_STATE_RECENCY", "current_state_recency"), ("MIN_SCORE", "min_score")):
                if f"FUSED_MEMORY_{key}" in env:
                    kw[name] = float(env[f"FUSED_MEMORY_{key}"])
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
    #: Where the lexical arm's index lives: "engine" (sparse vectors in Qdrant, shared by every
    #: process: connect()'s default) or "bm25" (rank-bm25-exact, in this process: embedded()'s
    #: default). None: the backend's default. See `LEXICAL_MODES`.
    lexical: str | None = None

    def __post_init__(self) -> None:
        if self.lexical is not None and self.lexical not in LEXICAL_MODES:
            raise ConfigurationError(f"lexical must be one of {', '.join(map(repr, LEXICAL_MODES))} or None, "
                                     f"got {self.lexical!r}")
        if self.lexical is not None:
            object.__setattr__(self, "lexical", LexicalIndex(self.lexical))

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> StoreConfig:
        env = os.environ if env is None else env
        auth = None
        if env.get("FUSED_MEMORY_NEO4J_USER"):
            auth = (env["FUSED_MEMORY_NEO4J_USER"], env.get("FUSED_MEMORY_NEO4J_PASSWORD", ""))
        return cls(path=env.get("FUSED_MEMORY_PATH"), qdrant_url=env.get("FUSED_MEMORY_QDRANT_URL"),
                   qdrant_api_key=env.get("FUSED_MEMORY_QDRANT_API_KEY"),
                   neo4j_uri=env.get("FUSED_MEMORY_NEO4J_URI"), neo4j_auth=auth,
                   lexical=env.get("FUSED_MEMORY_LEXICAL") or None)
