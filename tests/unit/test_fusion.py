"""Score-weighted RRF, checked against sums computed by hand: score(d) = Σ w·√s/(k + rank)."""

from __future__ import annotations

import math

import pytest

from fused_memory.ensemble.fusion import fuse, rrf_contribution
from fused_memory.results import Hit


def hits(*pairs: tuple[str, float]) -> list[Hit]:
    return [Hit(mid, s) for mid, s in pairs]


def test_single_arm_single_doc_is_the_formula():
    [f] = fuse({"dense": hits(("a", 0.81))}, {"dense": 1.0}, k=60)
    assert f.score == pytest.approx(math.sqrt(0.81) / 61)  # 0.9 / 61


def test_two_arms_sum_their_contributions():
    fused = fuse({"lexical": hits(("a", 0.93), ("b", 0.5)),
                  "dense": hits(("b", 0.9), ("c", 0.8), ("d", 0.7), ("a", 0.81))},
                 {"lexical": 1.0, "dense": 1.0}, k=60)
    by_id = {f.memory_id: f for f in fused}
    assert by_id["a"].score == pytest.approx(math.sqrt(0.93) / 61 + math.sqrt(0.81) / 64)  # 0.02987
    assert by_id["b"].score == pytest.approx(math.sqrt(0.5) / 62 + math.sqrt(0.9) / 61)    # 0.02696
    assert by_id["c"].score == pytest.approx(math.sqrt(0.8) / 62)
    assert [f.memory_id for f in fused] == ["a", "b", "c", "d"]


def test_weights_scale_each_arm_linearly():
    base = fuse({"graph": hits(("a", 1.0))}, {"graph": 1.0})[0].score
    assert fuse({"graph": hits(("a", 1.0))}, {"graph": 0.8})[0].score == pytest.approx(0.8 * base)
    assert fuse({"graph": hits(("a", 1.0))}, {"graph": 0.0})[0].score == 0.0


@pytest.mark.parametrize("k", [0, 1, 60, 1000])
def test_k_is_the_rank_offset(k):
    fused = fuse({"dense": hits(("a", 1.0), ("b", 1.0), ("c", 1.0))}, {}, k=k)
    assert [f.score for f in fused] == pytest.approx([1 / (k + 1), 1 / (k + 2), 1 / (k + 3)])


def test_ranks_start_at_one_and_missing_weight_is_one():
    [f] = fuse({"temporal": hits(("x", 0.25))}, {}, k=60)
    c = f.contributions[0]
    assert (c.rank, c.weight, c.raw_score) == (1, 1.0, 0.25)
    assert c.contribution == pytest.approx(0.5 / 61)
    with pytest.raises(ValueError):
        rrf_contribution(1.0, 0.5, 0, 60)


def test_duplicates_inside_an_arm_keep_the_first_occurrence_and_rerank():
    fused = fuse({"dense": hits(("a", 0.9), ("b", 0.8), ("a", 0.6), ("c", 0.5))}, {}, k=60)
    by_id = {f.memory_id: f for f in fused}
    assert [by_id[m].contributions[0].rank for m in "abc"] == [1, 2, 3]  # c moves up to rank 3
    assert by_id["a"].contributions[0].raw_score == 0.9
    assert len(by_id["a"].contributions) == 1


def test_rank_comes_from_the_arms_order_not_its_scores():
    # a graph arm may order by hop before score; fusion must respect the arm's ranking
    fused = fuse({"graph": hits(("near", 0.3), ("far", 0.9))}, {}, k=60)
    by_id = {f.memory_id: f for f in fused}
    assert by_id["near"].contributions[0].rank == 1
    assert by_id["far"].score == pytest.approx(math.sqrt(0.9) / 62)


def test_zero_score_contributes_nothing_but_is_listed():
    [f] = fuse({"lexical": hits(("a", 0.0))}, {}, k=60)
    assert f.score == 0.0 and f.contributions[0].arm == "lexical"


def test_scores_are_clamped_to_unit_interval():
    assert Hit("a", 1.7).score == 1.0 and Hit("a", -0.3).score == 0.0 and Hit("a", float("nan")).score == 0.0


def test_ties_break_on_arm_count_then_best_rank_then_id():
    # "a" is #1 in one arm; "b" is #... constructed so both sum to exactly 2/62 vs 1/61+1/63
    fused = fuse({"dense": hits(("z", 1.0), ("y", 1.0)), "lexical": hits(("y", 1.0), ("z", 1.0))}, {}, k=60)
    assert fused[0].score == fused[1].score
    assert [f.memory_id for f in fused] == ["y", "z"]  # equal arms, equal best rank -> id order
    two_arms = fuse({"dense": hits(("solo", 1.0), ("both", 0.25)), "lexical": hits(("both", 0.25))}, {}, k=0)
    # solo: 1/1 = 1.0; both: 0.5/2 + 0.5/1 = 0.75
    assert [f.memory_id for f in two_arms] == ["solo", "both"]


def test_deterministic_across_input_orders():
    a = fuse({"dense": hits(("a", 0.5), ("b", 0.5)), "lexical": hits(("b", 0.3))}, {})
    b = fuse({"lexical": hits(("b", 0.3)), "dense": hits(("a", 0.5), ("b", 0.5))}, {})
    assert [(f.memory_id, f.score) for f in a] == [(f.memory_id, f.score) for f in b]


def test_contributions_listed_in_arm_order_and_limit():
    fused = fuse({"type": hits(("a", 1.0)), "dense": hits(("a", 1.0)), "lexical": hits(("b", 1.0))}, {}, limit=1)
    assert len(fused) == 1
    assert [c.arm for c in fused[0].contributions] == ["dense", "type"]


def test_limit_is_a_prefix_of_the_full_ranking():
    """`limit` takes the k best without sorting everything; it must cut the same ranking."""
    import random

    rng = random.Random(5)
    for _ in range(300):
        results = {arm: hits(*[(f"m{rng.randint(0, 25)}", rng.choice([0.0, 0.25, 1.0, rng.random()]))
                               for _ in range(rng.randint(0, 30))])
                   for arm in rng.sample(["dense", "lexical", "graph", "temporal", "type"], rng.randint(1, 5))}
        weights = {arm: rng.choice([0.0, 0.5, 1.0]) for arm in results}
        k = rng.choice([0, 1, 10])
        full = fuse(results, weights, k=k)
        for limit in (1, 3, 10):
            assert fuse(results, weights, k=k, limit=limit) == full[:limit]
        scores = [f.score for f in full]
        assert scores == sorted(scores, reverse=True)


def test_equal_scores_break_on_more_arms_first():
    # k = 0: solo = 1/1 = 1.0; both = 1/2 + 0.5/1 = 1.0 exactly: found by two arms, ranked first
    fused = fuse({"dense": hits(("solo", 1.0), ("both", 1.0)), "lexical": hits(("both", 0.25))}, {}, k=0)
    assert fused[0].score == fused[1].score == 1.0
    assert [f.memory_id for f in fused] == ["both", "solo"]
    assert [f.memory_id for f in fuse({"dense": hits(("solo", 1.0), ("both", 1.0)),
                                       "lexical": hits(("both", 0.25))}, {}, k=0, limit=1)] == ["both"]
