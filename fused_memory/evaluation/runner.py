"""The eval runner: ingest a JSONL dataset, answer every query with every system, score.

Systems are rows of the report, all answered from one ingest so they differ only in how they
retrieve:

* `fused`: the ensemble as shipped (optimizer on, the learned order with the shipped ranker);
  `fused_rrf` the same in score-weighted RRF's order (`FusionConfig(order="rrf")`);
* one row per arm alone (`arms=[name]`), so the gain of fusion over each arm is visible. Single
  arms run with the optimizer *off*: with it on, the optimizer would skip e.g. the temporal arm on
  a query without a time cue, and an arm that never ran would look worse than it is, inflating
  fusion's apparent gain. Off, each arm answers every query it can answer;
* ablations: the ensemble without each arm (`fused_without_<arm>`), and with the optimizer off
  (`fused_optimizer_off`), to show what each part is worth.

Every conversation goes into its own namespace of one fresh store (default embedder; the embedded
default, or `backend="qdrant-local"`: qdrant-client's local mode, the server backend's code),
each query is asked with its own `now`, queries without gold ids are excluded from the metrics.
`Evaluator` keeps the store open so several fusion configs can be compared on one ingest, which is
how the defaults were tuned (docs/decisions/README.md).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any

from ..config import FusionConfig
from ..conversation import DEFAULT_CONTEXT_TURNS, conversation_context
from ..errors import FusedMemoryError, QueryError, StoreClosed
from ..query.parse import check_query_text
from ..results import ARMS
from ..terminal import terminal_safe
from ..types import Memory
from .data import EvalDataError, EvalDataset, EvalQuery
from .metrics import mean_scores, metric_names, percentile, score_query
from .significance import fusion_margins

__all__ = ["System", "default_systems", "QueryResult", "EvalReport", "Evaluator", "run_eval",
           "SINGLE_ARM_OPTIMIZER", "Progress", "quiet_progress", "stderr_progress", "EVAL_BACKENDS"]

#: Where `Evaluator` ingests: the embedded default (qdrant-edge), or the server backend's code on
#: qdrant-client's local mode (brute force: fine for LoCoMo's 2,760 memories, not for speed).
EVAL_BACKENDS = ("embedded", "qdrant-local")

#: Whether single-arm rows run with the query optimizer (see the module docstring for why not).
SINGLE_ARM_OPTIMIZER = False

Progress = Callable[[str], None]


def quiet_progress(_: str) -> None:
    """The default progress sink: says nothing (library callers opt in to chatter)."""
    return None


def stderr_progress(message: str) -> None:
    """Progress lines for the CLI: stderr, so `--json -` on stdout stays clean."""
    print(terminal_safe(message), file=sys.stderr, flush=True)  # names conversations from the data


@dataclass(frozen=True)
class System:
    """One way of answering: which arms may run (None = whatever the plan picks) and whether the
    query optimizer plans. `kind` is "fused", "arm" or "ablation" (for tables and plots)."""

    name: str
    arms: tuple[str, ...] | None = None
    optimizer: bool = True
    kind: str = "fused"
    #: Optimizer rules left out (`EnsembleMemory(rules_off=...)`): what one rule is worth is the
    #: ensemble with it against the ensemble without it (benchmarks/bench_rules.py).
    rules_off: tuple[str, ...] = ()
    #: The order of the fused candidates (`FusionConfig.order`); None: the config's.
    order: str | None = None


def default_systems(arms: Sequence[str] = ARMS, *, single_arms: bool = True,
                    ablations: bool = True) -> tuple[System, ...]:
    """fused, each arm alone, the ensemble without each arm, and the optimizer off.
    `arms` restricts everything to a subset (the fused row then uses only those arms)."""
    chosen = tuple(a for a in ARMS if a in set(arms))
    unknown = sorted(set(arms) - set(ARMS))
    if unknown or not chosen:
        raise FusedMemoryError(f"unknown arm(s) {unknown or list(arms)}; arms are {', '.join(ARMS)}")
    every = None if chosen == ARMS else chosen
    out = [System("fused", every, True, "fused"), System("fused_rrf", every, True, "fused", order="rrf")]
    if single_arms:
        out += [System(a, (a,), SINGLE_ARM_OPTIMIZER, "arm") for a in chosen]
    if ablations:
        if len(chosen) > 1:
            out += [System(f"fused_without_{a}", tuple(x for x in chosen if x != a), True, "ablation")
                    for a in chosen]
        out.append(System("fused_optimizer_off", every, False, "ablation"))
    return tuple(out)


@dataclass(frozen=True)
class QueryResult:
    """One query's ranked memory ids per system (for per-query analysis and debugging)."""

    query: EvalQuery
    ranked: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class EvalReport:
    """Mean metrics per system, overall and per category, plus what produced them.

    `latency_ms` is kept for tuning (what a deeper candidate list costs) but left out of the JSON:
    systems answering the same query share the query-embedding cache, so it is not a speed
    measurement; `fused-memory bench` is. `failures` counts arms dropped (error or timeout)."""

    systems: tuple[System, ...]
    metrics: tuple[str, ...]
    overall: Mapping[str, Mapping[str, float]]
    by_category: Mapping[str, Mapping[str, Mapping[str, float]]]
    n_queries: int
    n_by_category: Mapping[str, int]
    config: Mapping[str, Any]
    latency_ms: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    failures: Mapping[str, int] = field(default_factory=dict)
    per_query: tuple[QueryResult, ...] = ()
    #: Per category and "overall": fused minus the best single arm on the first recall metric, with
    #: its paired bootstrap interval (`significance.fusion_margins`).
    margins: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The machine-readable report (docs/eval_locomo.json is one)."""
        return {
            "overall": {s: dict(m) for s, m in self.overall.items()},
            "by_category": {c: {s: dict(m) for s, m in by_sys.items()} for c, by_sys in self.by_category.items()},
            "n_queries": self.n_queries,
            "n_by_category": dict(self.n_by_category),
            "config": _plain(self.config),
            "failures": dict(self.failures),
            "fused_minus_best_arm": _plain(self.margins),
        }


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _fusion_json(config: FusionConfig) -> dict[str, Any]:
    return {"order": config.order, "ranker": None if config.ranker is None else str(config.ranker),
            "rrf_k": config.k, "weights": dict(config.weights), "depth": config.depth,
            "widen_below": config.widen_below, "pool_min": config.pool_min,
            "after": {"recency_weight": config.recency_weight, "current_state_recency": config.current_state_recency,
                      "recency_half_life_days": config.recency_half_life_days, "recency_band": config.recency_band,
                      "supersede": config.supersede, "collapse": config.collapse,
                      "duplicate_cosine": config.duplicate_cosine, "mmr_lambda": config.mmr_lambda,
                      "after_depth": config.after_depth}}


class Evaluator:
    """One ingest of a dataset into a fresh embedded store, then any number of evaluations.

    `embedder=None` is the default MiniLM embedder (what the published numbers use); tests may pass
    another. `path=None` uses a temporary directory removed by `close()`. `context_turns` is how
    many preceding turns of a session are indexed with each turn (`conversation_context`; 0: none).
    `backend` is one of `EVAL_BACKENDS` ("qdrant-local": what connect() builds, on qdrant-client's
    local mode, the graph in the engine too); `lexical` the store's lexical index ("engine" or "bm25";
    None: that backend's default), so both can be scored on one dataset.
    """

    def __init__(self, dataset: EvalDataset, *, path: str | None = None, embedder: Any = None,
                 progress: Progress = quiet_progress, context_turns: int = DEFAULT_CONTEXT_TURNS,
                 backend: str = "embedded", lexical: str | None = None) -> None:
        from ..store.memory_store import MemoryStore

        conversation_context([], context_turns)  # validates before any I/O
        if backend not in EVAL_BACKENDS:
            raise FusedMemoryError(f"backend must be one of {', '.join(EVAL_BACKENDS)}, got {backend!r}")
        self.backend = backend
        self.context_turns = context_turns
        self.dataset = dataset
        self.progress = progress
        self._tmp = tempfile.TemporaryDirectory(prefix="fused-memory-eval-") if path is None else None
        self.path = path if path is not None else self._tmp.name  # type: ignore[union-attr]
        if backend == "embedded":
            self.store = MemoryStore.embedded(self.path, embedder=embedder, show_progress=False, lexical=lexical)
        else:
            self.store = MemoryStore.connect(qdrant_location=f"{self.path}/qdrant", embedder=embedder,
                                             show_progress=False, lexical=lexical)  # the graph in the engine
        self.ingest_s = 0.0
        self._ingested = False

    def __enter__(self) -> Evaluator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.store.close()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def ingest(self) -> float:
        """Each conversation into its own namespace; returns seconds spent (idempotent)."""
        if self._ingested:
            return self.ingest_s
        t0 = time.perf_counter()
        self.store.open()
        by_conv: dict[str, list[Memory]] = {}
        for m in self.dataset.memories:
            by_conv.setdefault(m.conversation_id, []).append(m.to_memory())
        for i, (conv, memories) in enumerate(by_conv.items(), 1):
            self.store.add(conversation_context(memories, self.context_turns), show_progress=False)
            latest = self.dataset.latest_time(conv)
            if latest is not None:  # the conversation's last session is over when questions come
                self.store.end_session(conv, at=latest)
            self.progress(f"ingested {conv}: {len(memories)} memories ({i}/{len(by_conv)})")
        self.ingest_s = time.perf_counter() - t0
        self._ingested = True
        return self.ingest_s

    def _check_questions(self, max_chars: int) -> None:
        """A question no system can be asked is bad input, not a miss of every system (the ones
        without gold ids are never asked)."""
        for q in (q for q in self.dataset.queries if q.gold_ids):
            try:
                check_query_text(q.question, max_chars)
            except QueryError as exc:
                raise EvalDataError(f"query {q.id!r} of conversation {q.conversation_id!r}: {exc}") from None

    def evaluate(self, systems: Sequence[System] | None = None, config: FusionConfig | None = None, *,
                 ks: Sequence[int] = (5, 10), ndcg_ks: Sequence[int] = (10,),
                 keep_per_query: bool = False) -> EvalReport:
        """Answer every query with every system under `config` and score the rankings."""
        from ..ensemble import EnsembleMemory

        config = config or FusionConfig()
        self._check_questions(config.max_query_chars)  # before the ingest, not after it
        config.check_arms()  # the evaluator gives no custom arms: a misspelled arm fails before the ingest too
        self.ingest()
        systems = tuple(systems or default_systems())
        depth_k = max((*ks, *ndcg_ks))
        names = metric_names(ks, ndcg_ks)
        ensembles = {(s.optimizer, s.rules_off, s.order): EnsembleMemory(
            self.store, config.with_(order=s.order) if s.order else config, optimizer=s.optimizer,
            rules_off=s.rules_off) for s in systems}
        scored: dict[str, list[tuple[str, dict[str, float]]]] = {s.name: [] for s in systems}
        latency: dict[str, list[float]] = {s.name: [] for s in systems}
        failures: dict[str, int] = {s.name: 0 for s in systems}
        per_query: list[QueryResult] = []
        queries = [q for q in self.dataset.queries if q.gold_ids]
        excluded = len(self.dataset.queries) - len(queries)
        defaults: dict[str, datetime | None] = {}
        try:
            for n, q in enumerate(queries, 1):
                if q.conversation_id not in defaults:
                    defaults[q.conversation_id] = self.dataset.latest_time(q.conversation_id)
                now = q.now or defaults[q.conversation_id]
                ranked_by: dict[str, tuple[str, ...]] = {}
                for s in systems:
                    t0 = time.perf_counter()
                    try:
                        result = ensembles[(s.optimizer, s.rules_off, s.order)].retrieve(
                            q.question, namespace=q.conversation_id, k=depth_k, now=now,
                            arms=list(s.arms) if s.arms is not None else None)
                        ranked = tuple(result.ids())
                        failures[s.name] += len(result.failures)
                    except StoreClosed:  # the evaluator was closed: no score is honest
                        raise
                    except FusedMemoryError:
                        ranked = ()
                        failures[s.name] += 1
                    latency[s.name].append((time.perf_counter() - t0) * 1000)
                    ranked_by[s.name] = ranked
                    row = score_query(ranked, q.gold_ids, ks, ndcg_ks)
                    if row is not None:
                        scored[s.name].append((q.category, row))
                if keep_per_query:
                    per_query.append(QueryResult(q, MappingProxyType(ranked_by)))
                if n % 100 == 0:
                    self.progress(f"answered {n}/{len(queries)} queries")
        finally:
            for ens in ensembles.values():
                ens.close()

        recalls = [m for m in names if m.startswith("recall@")]
        single = [s.name for s in systems if s.kind == "arm"]
        margins = fusion_margins(scored, single, recalls[0]) if recalls else {}
        categories = list(dict.fromkeys(q.category for q in queries))
        overall = {s.name: _rounded(mean_scores(r for _, r in scored[s.name]), names) for s in systems}
        by_category = {c: {s.name: _rounded(mean_scores(r for cat, r in scored[s.name] if cat == c), names)
                           for s in systems} for c in categories}
        config_json: dict[str, Any] = {
            "ks": list(ks), "ndcg_ks": list(ndcg_ks), "fusion": _fusion_json(config),
            "systems": [{"name": s.name, "arms": list(s.arms) if s.arms else "planned",
                         "optimizer": s.optimizer, "kind": s.kind, "rules_off": list(s.rules_off),
                         "order": s.order or config.order}
                        for s in systems],
            "single_arm_optimizer": SINGLE_ARM_OPTIMIZER,
            "embedder": getattr(getattr(self.store.embedder, "id", None), "name", None),
            # the id names the weights; this says how they ran ("int8" kernels or the "float" graph)
            "embedder_activations": getattr(self.store.embedder, "activations", None),
            "n_memories": len(self.dataset.memories),
            "n_conversations": len(self.dataset.conversations()),
            "n_queries_total": len(self.dataset.queries), "excluded_no_gold": excluded,
            "ingest_s": round(self.ingest_s, 2), "context_turns": self.context_turns,
            "backend": self.backend, "lexical": self.store.config.lexical,
            "input_warnings": list(self.dataset.warnings),
        }
        return EvalReport(
            systems=systems, metrics=names, overall=overall, by_category=by_category,
            n_queries=len(queries), n_by_category={c: sum(1 for q in queries if q.category == c) for c in categories},
            config=config_json,
            latency_ms={s: {"p50": round(statistics.median(v), 2) if v else 0.0,
                            "p99": round(percentile(v, 0.99), 2)} for s, v in latency.items()},
            failures=failures, per_query=tuple(per_query), margins=margins)


def _rounded(means: Mapping[str, float], names: Sequence[str]) -> dict[str, float]:
    """Every metric key present (0.0 when no query of that slice was scored), 4 decimals."""
    return {n: round(float(means.get(n, 0.0)), 4) for n in names}


def run_eval(dataset: EvalDataset, *, systems: Sequence[System] | None = None,
             config: FusionConfig | None = None, ks: Sequence[int] = (5, 10), ndcg_ks: Sequence[int] = (10,),
             embedder: Any = None, path: str | None = None, progress: Progress = quiet_progress,
             context_turns: int = DEFAULT_CONTEXT_TURNS, backend: str = "embedded",
             lexical: str | None = None) -> EvalReport:
    """Ingest `dataset` into a fresh store and evaluate once: what `fused-memory eval` runs."""
    with Evaluator(dataset, path=path, embedder=embedder, progress=progress,
                   context_turns=context_turns, backend=backend, lexical=lexical) as ev:
        return ev.evaluate(systems, config, ks=ks, ndcg_ks=ndcg_ks)
