"""Evaluation and benchmarks: the numbers behind "fusion beats any single retriever, and is fast".

Built into the package (not a script folder) so anyone can run them on their own data:
`fused-memory eval` scores the ensemble, each arm and ablations on the JSONL format of `data`;
`fused-memory bench` times ingest and retrieval on synthetic corpora; `churn_set` is the synthetic
set of changing facts and repeated saves the stage after fusion is measured on
(benchmarks/bench_after_fusion.py). Importing this package is cheap: the store, the models and
matplotlib load only when a run starts.
"""

from __future__ import annotations

from .bench import run_bench
from .churn import ChurnQuery, ChurnSet, churn_set
from .data import EvalDataError, EvalDataset, EvalMemory, EvalQuery, load_dataset, load_memories, load_queries
from .metrics import mean_scores, metric_names, ndcg_at_k, rank_by_score, recall_at_k, score_query
from .runner import EvalReport, Evaluator, QueryResult, System, default_systems, run_eval

__all__ = [
    "EvalDataError", "EvalDataset", "EvalMemory", "EvalQuery", "load_dataset", "load_memories", "load_queries",
    "recall_at_k", "ndcg_at_k", "rank_by_score", "metric_names", "score_query", "mean_scores",
    "System", "default_systems", "QueryResult", "EvalReport", "Evaluator", "run_eval",
    "run_bench", "ChurnQuery", "ChurnSet", "churn_set",
]

