"""The stage after fusion at formula level: the recency decay and its RRF term, the contenders'
band, supersession's permutation, near-duplicate groups and their guard, MMR, and the rerank blend.
Every expected number is computed by hand from the formulas in the modules' docstrings."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from fused_memory.ensemble.candidate import Candidate, text_key
from fused_memory.ensemble.duplicates import collapse, content, duplicate_groups, mmr, same_content
from fused_memory.ensemble.recency import (
    about_now,
    add_recency,
    contenders,
    decay,
    predicate_key,
    recency_ranks,
    supersede,
)
from fused_memory.ensemble.reranking import apply_rerank, blend_order, rerank_task
from fused_memory.query.parse import parse_query
from fused_memory.results import Contribution
from fused_memory.types import Memory

NOW = datetime(2025, 6, 30, 12, tzinfo=timezone.utc)


def cand(mid: str, score: float, days: float | None = None, *, dense: float | None = None, text: str | None = None,
         predicate: str | None = None, event: bool = False) -> Candidate:
    when = NOW - timedelta(days=days) if days is not None else None
    memory = Memory(text=text or f"memory {mid}", id=mid, predicate=predicate,
                    event_at=when if event else None, created_at=None if event else when)
    shares = (Contribution("dense", 1, dense, 1.5, 0.1),) if dense is not None else ()
    return Candidate(memory, score, shares)


# ------------------------------------------------------------------ recency
@pytest.mark.parametrize(("age", "half_life", "expected"), [
    (0, 30, 1.0), (30, 30, 0.5), (60, 30, 0.25), (365, 365, 0.5), (-5, 30, 1.0), (10, 20, 2 ** -0.5)])
def test_decay_halves_every_half_life(age, half_life, expected):
    assert decay(age, half_life) == pytest.approx(expected)


def test_recency_ranks_newest_first_ties_share_a_rank_and_no_time_is_left_out():
    cs = [cand("a", 1, 10), cand("b", 1, 2), cand("c", 1, 10), cand("d", 1), cand("e", 1, 40, event=True)]
    ranks = recency_ranks(cs, NOW, 30)
    assert {i: r for i, (r, _, _) in ranks.items()} == {1: 1, 0: 2, 2: 2, 4: 4}  # competition ranking
    assert ranks[4][1] == pytest.approx(0.5 ** (40 / 30)) and ranks[4][2] == pytest.approx(40)  # event_at wins


def test_recency_term_is_the_rrf_formula_and_reorders():
    old, new = cand("old", 0.30, 300), cand("new", 0.25, 3)
    out = add_recency([old, new], weight=2.0, k=10, now=NOW, half_life_days=30)
    term_new = 2.0 * math.sqrt(0.5 ** (3 / 30)) / (10 + 1)
    term_old = 2.0 * math.sqrt(0.5 ** (300 / 30)) / (10 + 2)
    assert [c.memory.id for c in out] == ["new", "old"]
    assert out[0].score == pytest.approx(0.25 + term_new) and out[1].score == pytest.approx(0.30 + term_old)
    share = out[0].contributions[-1]
    assert (share.arm, share.rank, share.weight) == ("recency", 1, 2.0)
    assert share.raw_score == pytest.approx(0.5 ** 0.1) and share.contribution == pytest.approx(term_new)


def test_recency_weight_zero_changes_nothing():
    cs = [cand("old", 0.30, 300), cand("new", 0.25, 3)]
    assert add_recency(cs, 0.0, 10, NOW, 30) == cs


def test_contenders_are_within_the_band_of_the_best_dense_cosine():
    cs = [cand("a", 1, 1, dense=0.80), cand("b", 1, 1, dense=0.71), cand("c", 1, 1, dense=0.69), cand("d", 1, 1)]
    assert contenders(cs, 0.1) == [0, 1]
    assert contenders(cs, None) == [0, 1, 2, 3]
    assert contenders([cand("x", 1, 1), cand("y", 1, 2)], 0.1) == [0, 1]  # no dense score: everyone


def test_only_contenders_get_a_recency_term():
    relevant_old = cand("old", 0.30, 400, dense=0.80)
    relevant_new = cand("new", 0.25, 60, dense=0.75)
    off_topic_newest = cand("noise", 0.20, 1, dense=0.40)
    out = add_recency([relevant_old, relevant_new, off_topic_newest], 2.0, 10, NOW, 365, band=0.1)
    assert [c.memory.id for c in out] == ["new", "old", "noise"]
    assert not [c for c in out[2].contributions if c.arm == "recency"]
    assert out[0].contributions[-1].rank == 1  # ranked among the contenders only


# ------------------------------------------------------------------ supersession
@pytest.mark.parametrize(("raw", "key"), [("Home City", "home city"), ("home_city", "home city"),
                                          ("  home-city. ", "home city"), ("", None), ("   ", None), (None, None)])
def test_predicate_key_ignores_case_spacing_and_separators(raw, key):
    assert predicate_key(raw) == key


def test_versions_keep_their_places_newest_first_others_stay():
    cs = [cand("v1", 0.9, 300, predicate="alice home", text="Alice lives in Berlin"),
          cand("x", 0.8, 5),
          cand("v2", 0.7, 100, predicate="Alice_Home", text="Alice moved to Munich"),
          cand("y", 0.6, 1),
          cand("v3", 0.5, 10, predicate="alice home", text="Alice settled in Oslo")]
    out = supersede(cs)
    assert [c.memory.id for c in out] == ["v3", "x", "v2", "y", "v1"]
    assert out[0].supersedes == ("v2", "v1") and out[2].superseded_by == "v3" and out[4].superseded_by == "v3"
    assert out[1] is cs[1] and out[3] is cs[3]


def test_no_predicate_or_the_same_text_is_not_a_version():
    cs = [cand("a", 0.9, 300, text="I live in Berlin"), cand("b", 0.8, 1, text="We moved to Munich")]
    assert supersede(cs) == cs
    same = [cand("a", 0.9, 300, predicate="home", text="I live in Berlin."),
            cand("b", 0.8, 1, predicate="home", text="i live in berlin")]
    assert supersede(same) == same  # copies, for collapse to fold


@pytest.mark.parametrize(("query", "applies"), [
    ("where do I live now?", True), ("where do I live these days?", True), ("what did I do recently?", True),
    ("where did I live in March 2025?", False), ("when did I move to Munich?", False)])
def test_supersession_and_recency_skip_questions_about_the_past(query, applies):
    assert about_now(parse_query(query, now=NOW)) is applies


# ------------------------------------------------------------------ duplicates
def test_text_key_ignores_case_punctuation_and_spacing():
    assert text_key("User prefers green tea.") == text_key("user  prefers green-tea!!") == "user prefers green tea"


@pytest.mark.parametrize(("a", "b", "copies"), [
    ("Alice prefers green tea", "Note: Alice prefers green tea.", True),
    ("Alice prefers green tea", "Alice still prefers green tea", True),
    ("My badge ID is E-12345", "My badge ID is E-67890", False),
    ("The meeting is at 3pm", "The meeting is at 4pm", False),
    ("The user is allergic to peanuts", "The user is not allergic to peanuts", False),
    ("victor ivanova wants the weekly report on thursday", "arjun ivanova wants the weekly report on monday", False),
    ("Alice prefers green tea", "Alice likes green tea", False),
])
def test_same_content_guard(a, b, copies):
    assert same_content(content(a), content(b)) is copies


def _unit(*values: float) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_groups_by_text_or_by_cosine_with_the_guard_transitively():
    cs = [cand("a", 0.9, 30, text="Alice prefers green tea"),
          cand("b", 0.8, 20, text="Bob likes coffee"),
          cand("c", 0.7, 10, text="alice prefers green tea!"),
          cand("d", 0.6, 5, text="Note: Alice prefers green tea"),
          cand("e", 0.5, 1, text="My badge ID is E-67890"),
          cand("f", 0.4, 2, text="My badge ID is E-12345")]
    vectors = {"a": _unit(1, 0, 0), "b": _unit(0, 1, 0), "c": _unit(1, 0, 0), "d": _unit(1, 0.1, 0),
               "e": _unit(0, 0, 1), "f": _unit(0, 0.01, 1)}
    assert duplicate_groups(cs, vectors, 0.95) == [[0, 2, 3], [1], [4], [5]]  # e/f: alike, different digits
    assert duplicate_groups(cs, None, 0.95) == [[0, 2], [1], [3], [4], [5]]  # text only
    assert duplicate_groups(cs, vectors, None) == [[0, 2], [1], [3], [4], [5]]


def test_a_group_takes_its_best_place_shows_its_newest_and_lists_the_rest():
    cs = [cand("a", 0.9, 30, text="Alice prefers green tea"), cand("b", 0.8, 20, text="Bob likes coffee"),
          cand("c", 0.7, 1, text="alice prefers green tea!"), cand("d", 0.6, 10, text="ALICE PREFERS GREEN TEA")]
    out = collapse(cs)
    assert [c.memory.id for c in out] == ["c", "b"]
    assert out[0].collapsed == ("a", "d") and out[0].score == 0.9 and out[0].contributions == cs[0].contributions


def test_mmr_formula_and_lambda_one_keeps_the_order():
    cs = [cand("a", 1.0, 1), cand("b", 0.9, 1), cand("c", 0.5, 1)]
    vectors = {"a": _unit(1, 0), "b": _unit(1, 0.05), "c": _unit(0, 1)}
    assert mmr(cs, vectors, 1.0) == cs
    # lambda 0.5: after a, b gains 0.5*0.9 - 0.5*~1.0 < c's 0.5*0.5 - 0.5*0
    assert [c.memory.id for c in mmr(cs, vectors, 0.5)] == ["a", "c", "b"]
    assert [c.memory.id for c in mmr(cs, vectors, 0.9)] == ["a", "b", "c"]  # 0.81 - 0.1 > 0.45


# ------------------------------------------------------------------ rerank blend
def test_blend_one_is_the_rerankers_order_zero_the_fused_one():
    scores = [0.1, 0.9, 0.5]
    assert blend_order(scores, 1.0, 10) == [1, 2, 0]
    assert blend_order(scores, 0.0, 10) == [0, 1, 2]


def test_blend_is_reciprocal_rank_fusion_of_the_two_ranks():
    scores = [0.1, 0.9, 0.5, 0.3]  # rerank ranks 4, 1, 2, 3; fused ranks 1, 2, 3, 4
    b, k = 0.7, 10
    value = [b / (k + rr) + (1 - b) / (k + fr) for rr, fr in ((4, 1), (1, 2), (2, 3), (3, 4))]
    assert blend_order(scores, b, k) == sorted(range(4), key=lambda i: -value[i])
    # an even blend of (fused 1, rerank 2) and (fused 2, rerank 1) ties: the fused order breaks it
    assert blend_order([0.5, 0.9], 0.5, 10) == [0, 1]


def test_equal_rerank_scores_keep_the_fused_order():
    assert blend_order([0.5, 0.5, 0.5], 1.0, 10) == [0, 1, 2]


def test_applying_an_answer_marks_scores_and_ranks_before():
    cs = [cand("a", 0.9, 1), cand("b", 0.8, 1), cand("c", 0.7, 1)]

    class Flip:
        def rerank(self, query, texts):
            return [0.1, 0.9]

    task = rerank_task(Flip(), "q", cs, 2, 1.0)
    assert task is not None and task.fn() == (0.1, 0.9)
    out, failure, ms = apply_rerank(cs, task, ((0.1, 0.9), 1.5), 1.0, 10, "Flip")
    assert failure is None and ms == 1.5
    assert [(c.memory.id, c.rerank_score, c.rank_before_rerank) for c in out] == [
        ("b", 0.9, 2), ("a", 0.1, 1), ("c", None, None)]


@pytest.mark.parametrize("outcome", [TimeoutError("no answer within 1.00s"), ValueError("boom"), None])
def test_a_failed_rerank_leaves_the_order_and_names_itself(outcome):
    cs = [cand("a", 0.9, 1), cand("b", 0.8, 1)]

    class Any:
        def rerank(self, query, texts):
            return [0.0, 0.0]

    task = rerank_task(Any(), "q", cs, 2, 1.0)
    out, failure, ms = apply_rerank(cs, task, outcome, 1.0, 10, "Any")
    assert out == cs and ms is None and failure is not None
    assert failure.arm == "rerank" and failure.kind == ("timeout" if isinstance(outcome, TimeoutError) else "error")
    assert failure.reason.startswith("Any: ")


def test_no_task_without_a_reranker_or_with_one_candidate():
    class R:
        def rerank(self, query, texts):
            return [1.0] * len(texts)

    assert rerank_task(None, "q", [cand("a", 1, 1), cand("b", 1, 1)], 5, 1.0) is None
    assert rerank_task(R(), "q", [cand("a", 1, 1)], 5, 1.0) is None


def test_vectors_are_read_only_for_pairs_that_say_the_same_in_words():
    calls: list[list[str]] = []

    def read(ids):
        calls.append(list(ids))
        return {"a": _unit(1, 0), "c": _unit(1, 0.01)}

    distinct = [cand("a", 0.9, 3, text="Alice prefers green tea"), cand("b", 0.8, 2, text="Bob likes coffee"),
                cand("d", 0.7, 1, text="alice prefers green tea!")]
    assert duplicate_groups(distinct, read, 0.9) == [[0, 2], [1]] and calls == []  # equal texts need no vector
    near = [*distinct[:2], cand("c", 0.7, 1, text="Note: Alice prefers green tea")]
    assert duplicate_groups(near, read, 0.9) == [[0, 2], [1]] and calls == [["a", "c"]]
    assert duplicate_groups(near, lambda ids: None, 0.9) == [[0], [1], [2]]  # no vectors: texts only
