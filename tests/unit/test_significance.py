"""The margin of fusion over the best single arm and its paired bootstrap interval, against cases
whose answer is known by hand."""

from __future__ import annotations

import pytest

from fused_memory.evaluation.significance import bootstrap_ci, fusion_margins


def test_a_constant_difference_has_no_spread() -> None:
    assert bootstrap_ci([0.25] * 40) == (0.25, 0.25)


def test_two_values_resample_to_their_three_possible_means() -> None:
    # n = 2: a resample's mean is 0, 0.5 or 1 with odds 1/4, 1/2, 1/4, so the 2.5% and 97.5% points are 0 and 1
    assert bootstrap_ci([0.0, 1.0]) == (0.0, 1.0)


def test_the_interval_has_the_width_of_the_standard_error() -> None:
    # 100 queries, half won by one point: mean 0.5, standard error 0.05, so about 0.5 +- 0.098
    lo, hi = bootstrap_ci([0.0, 1.0] * 50)
    assert 0.38 < lo < 0.42 and 0.58 < hi < 0.62


@pytest.mark.parametrize(("values", "kw"), [([], {}), ([1.0], {"level": 1.0}), ([1.0], {"resamples": 0})])
def test_what_cannot_be_bootstrapped_is_refused(values: list, kw: dict) -> None:
    with pytest.raises(ValueError):
        bootstrap_ci(values, **kw)


def _rows(cats: list[str], values: list[float]) -> list[tuple[str, dict[str, float]]]:
    return [(c, {"recall@5": v}) for c, v in zip(cats, values, strict=True)]


def test_margins_pick_the_best_arm_per_category_and_pair_by_query() -> None:
    spread = [1.0, 0.5, 0.2, 0.9, 0.6, 0.3, 0.8, 0.4, 0.7, 0.1]
    cats = ["a"] * 10 + ["b"] * 10 + ["c"] * 2
    rows = {"fused": _rows(cats, spread + [1.0, 0.0] * 5 + [1.0, 0.0]),
            "dense": _rows(cats, [v - 0.1 for v in spread] + [0.0] * 10 + [0.0, 0.0]),  # fused - 0.1 on "a"
            "lexical": _rows(cats, [0.0] * 10 + [1.0] * 10 + [1.0, 1.0])}
    m = fusion_margins(rows, ["dense", "lexical"], "recall@5")
    assert list(m) == ["a", "b", "c", "overall"]
    # "a": dense is best; the per-question values spread widely, but the difference does not, so
    # the paired interval has no width at all
    assert m["a"] == {"metric": "recall@5", "best_arm": "dense", "fused_minus_best": 0.1, "ci95": [0.1, 0.1], "n": 10}
    # "b": lexical is best; fused ties it on half the questions and loses a point on the others
    assert m["b"]["best_arm"] == "lexical" and m["b"]["fused_minus_best"] == -0.5 and m["b"]["n"] == 10
    lo, hi = m["b"]["ci95"]
    assert -0.85 < lo < -0.6 and -0.4 < hi < -0.15
    assert m["c"]["ci95"] is None and m["c"]["n"] == 2  # too few questions for an interval
    assert m["overall"]["n"] == 22 and m["overall"]["best_arm"] == "lexical"


def test_margins_refuse_systems_scored_on_different_queries() -> None:
    rows = {"fused": _rows(["a", "a"], [1.0, 0.0]), "dense": _rows(["a"], [1.0])}
    with pytest.raises(ValueError, match="same queries"):
        fusion_margins(rows, ["dense"], "recall@5")
    assert fusion_margins(rows, [], "recall@5") == {}


def test_statistics_of_resamples_for_the_bench_ratios() -> None:
    import numpy as np

    from fused_memory.evaluation.significance import median_of, nearest_rank

    rows = np.array([[3.0, 1.0, 2.0, 10.0], [5.0, 5.0, 1.0, 1.0]])
    assert median_of(rows).tolist() == [2.5, 3.0]
    assert nearest_rank(rows, 0.99).tolist() == [10.0, 5.0] and nearest_rank(rows, 0.0).tolist() == [1.0, 1.0]
    # paired: "on" is always half of "off", so every resample's ratio is 0.5 whatever the spread
    off = [4.0, 9.0, 30.0, 2.0, 7.0]
    assert bootstrap_ci([x / 2 for x in off], off, stat=lambda a, b: nearest_rank(a, 0.99) / nearest_rank(b, 0.99)) \
        == (0.5, 0.5)
    with pytest.raises(ValueError, match="one value per query"):
        bootstrap_ci([1.0, 2.0], [1.0], stat=lambda a, b: a.mean(axis=1))
    with pytest.raises(ValueError, match="give a stat"):
        bootstrap_ci([1.0], [1.0])


def test_resampling_in_blocks_gives_the_same_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    import fused_memory.evaluation.significance as sig

    values = [float(i % 7) for i in range(300)]
    whole = bootstrap_ci(values)
    monkeypatch.setattr(sig, "_CHUNK_CELLS", 300 * 7)  # 7 resamples per block, the last one partial
    assert bootstrap_ci(values) == whole
