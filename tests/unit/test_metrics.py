"""Recall@k and NDCG@k against values computed by hand, the edge cases a benchmark gets wrong
(no gold, k past the end, repeats, ties), and a cross-check with ir-measures when installed."""

from __future__ import annotations

import math
import random

import pytest

from fused_memory.evaluation.metrics import (
    mean_scores,
    metric_names,
    ndcg_at_k,
    rank_by_score,
    recall_at_k,
    score_query,
)

L2 = math.log2


def test_recall_hand_computed():
    ranked = ["a", "b", "c", "d", "e"]
    assert recall_at_k(ranked, {"a"}, 1) == 1.0
    assert recall_at_k(ranked, {"c", "x"}, 2) == 0.0
    assert recall_at_k(ranked, {"c", "x"}, 3) == 0.5          # c found, x never
    assert recall_at_k(ranked, {"b", "d", "z"}, 5) == pytest.approx(2 / 3)


def test_ndcg_hand_computed():
    # gold {a, c}; ranking a, b, c: DCG = 1/log2(2) + 1/log2(4) = 1.5; IDCG = 1 + 1/log2(3)
    assert ndcg_at_k(["a", "b", "c"], {"a", "c"}, 3) == pytest.approx(1.5 / (1 + 1 / L2(3)))
    # at k=2 only a counts: DCG = 1, IDCG still has two slots: 1 + 1/log2(3)
    assert ndcg_at_k(["a", "b", "c"], {"a", "c"}, 2) == pytest.approx(1 / (1 + 1 / L2(3)))
    # one gold id at rank 4: 1/log2(5)
    assert ndcg_at_k(["w", "x", "y", "g"], {"g"}, 10) == pytest.approx(1 / L2(5))
    assert ndcg_at_k(["g", "x"], {"g"}, 10) == 1.0
    assert ndcg_at_k(["x", "y"], {"g"}, 10) == 0.0


def test_ideal_dcg_is_capped_at_k():
    # five gold ids but k = 2: a perfect top-2 is NDCG 1, not 2/5 of something
    assert ndcg_at_k(["a", "b"], {"a", "b", "c", "d", "e"}, 2) == pytest.approx(1.0)
    assert recall_at_k(["a", "b"], {"a", "b", "c", "d", "e"}, 2) == pytest.approx(0.4)


def test_empty_gold_is_excluded_not_zero():
    assert recall_at_k(["a"], set(), 5) is None
    assert ndcg_at_k(["a"], [], 5) is None
    assert score_query(["a"], (), (5, 10)) is None
    # mean over queries skips excluded ones instead of averaging in a 0 or a 1
    rows = [score_query(["a"], {"a"}, (1,)), score_query(["a"], set(), (1,)), score_query(["b"], {"a"}, (1,))]
    assert mean_scores(rows) == {"recall@1": 0.5, "ndcg@10": 0.5}
    assert mean_scores([None, None]) == {}


def test_k_larger_than_results():
    assert recall_at_k(["a", "b"], {"b", "c"}, 100) == 0.5
    assert recall_at_k([], {"a"}, 10) == 0.0
    assert ndcg_at_k([], {"a"}, 10) == 0.0
    assert ndcg_at_k(["x", "a"], {"a"}, 100) == pytest.approx(1 / L2(3))


def test_repeated_id_counts_once_at_its_best_rank():
    # "a" twice must not fill two slots of gold credit, and the repeat must not push "b" out of top-2
    assert recall_at_k(["a", "a", "b"], {"a", "b"}, 2) == 1.0
    assert ndcg_at_k(["a", "a", "b"], {"a", "b"}, 2) == pytest.approx(1.0)
    assert ndcg_at_k(["x", "a", "a"], {"a"}, 3) == pytest.approx(1 / L2(3))


def test_ties_are_broken_by_id_so_metrics_are_reproducible():
    scores = {"c": 0.5, "a": 0.5, "b": 0.9, "d": 0.1}
    assert rank_by_score(scores) == ["b", "a", "c", "d"]
    assert rank_by_score(dict(reversed(list(scores.items())))) == ["b", "a", "c", "d"]
    # gold "c" tied with "a" at ranks 2-3: the tie-break decides, always the same way
    assert recall_at_k(rank_by_score(scores), {"c"}, 2) == 0.0
    assert recall_at_k(rank_by_score(scores), {"a"}, 2) == 1.0


def test_gold_given_as_list_with_duplicates():
    assert recall_at_k(["a", "b"], ["a", "a", "c"], 2) == 0.5


def test_bad_k_is_refused():
    for k in (0, -1, 1.5, True):
        with pytest.raises(ValueError):
            recall_at_k(["a"], {"a"}, k)  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            ndcg_at_k(["a"], {"a"}, k)  # type: ignore[arg-type]


def test_metric_names_and_score_query_keys_agree():
    names = metric_names((5, 10))
    assert names == ("recall@5", "recall@10", "ndcg@10")
    assert tuple(score_query(["a"], {"a"}, (5, 10))) == names


def test_cross_check_with_ir_measures():
    import ir_measures  # in the test extra: this check must run, never skip
    from ir_measures import Qrel, R, ScoredDoc, nDCG

    rng = random.Random(5)
    docs = [f"d{i:02d}" for i in range(30)]
    qrels, run, ours = [], [], {}
    for q in range(40):
        qid = f"q{q}"
        gold = set(rng.sample(docs, rng.randint(1, 6)))
        ranked = rng.sample(docs, rng.randint(0, 25))
        qrels += [Qrel(qid, d, 1) for d in gold]
        # strictly decreasing scores: the ranking is exactly `ranked` for both implementations
        run += [ScoredDoc(qid, d, float(len(ranked) - i)) for i, d in enumerate(ranked)]
        ours[qid] = (ranked, gold)
    measures = [R@5, R@10, nDCG@10, nDCG@3]
    theirs = {(m, r.query_id): r.value for r in ir_measures.iter_calc(measures, qrels, run) for m in [r.measure]}
    for qid, (ranked, gold) in ours.items():
        for m, value in ((R@5, recall_at_k(ranked, gold, 5)), (R@10, recall_at_k(ranked, gold, 10)),
                         (nDCG@10, ndcg_at_k(ranked, gold, 10)), (nDCG@3, ndcg_at_k(ranked, gold, 3))):
            # trec_eval leaves a query with an empty run out; our value is 0 there
            assert value == pytest.approx(theirs.get((m, qid), 0.0), abs=1e-9), (qid, m)
