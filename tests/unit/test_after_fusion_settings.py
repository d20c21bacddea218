"""The settings of the stage after fusion: FusionConfig's fields and the per-call options are checked
where they are given, with the field named; a reranker's answer is checked before it is trusted;
the optimizer raises the recency weight for questions about the present, with its reason."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import numpy as np
import pytest

from fused_memory import ConfigurationError, FusionConfig, QueryError
from fused_memory.ensemble import check_after
from fused_memory.ensemble.after_fusion import recency_weight
from fused_memory.ensemble.fanout import Job
from fused_memory.errors import BackendError
from fused_memory.query.optimizer import fired_rules, optimize, optimize_off
from fused_memory.query.parse import parse_query
from fused_memory.rerank import Reranker, as_reranker, check_scores, reranker_name

NOW = datetime(2025, 6, 30, 12, tzinfo=timezone.utc)


@pytest.mark.parametrize(("field", "value"), [
    ("recency_weight", -0.1), ("recency_weight", "1"), ("current_state_recency", -1),
    ("current_state_recency", None), ("recency_weight", math.inf), ("recency_weight", True),
    ("recency_half_life_days", 0), ("recency_half_life_days", math.nan), ("recency_band", -0.1),
    ("duplicate_cosine", 1.01), ("duplicate_cosine", "0.9"), ("mmr_lambda", 1.5), ("mmr_lambda", -0.1),
    ("rerank_blend", 1.1), ("rerank_timeout_s", 0), ("rerank_timeout_s", -1), ("rerank_depth", 0),
    ("after_depth", 0), ("after_depth", 2.5), ("collapse", 1), ("supersede", "yes")])
def test_bad_settings_are_refused_naming_the_field(field, value):
    with pytest.raises(ConfigurationError, match=field):
        FusionConfig(**{field: value})


def test_good_settings_are_kept_as_numbers():
    cfg = FusionConfig(recency_weight=1, recency_half_life_days=np.float32(90), duplicate_cosine=None,
                       mmr_lambda=0.7, rerank_timeout_s=math.inf, rerank_blend=0)
    assert (cfg.recency_weight, cfg.recency_half_life_days) == (1.0, 90.0)
    assert (cfg.duplicate_cosine, cfg.mmr_lambda) == (None, 0.7)
    assert cfg.rerank_timeout_s == math.inf and cfg.rerank_blend == 0.0


def test_environment_sets_recency_and_the_rerank_timeout():
    cfg = FusionConfig.from_env({"FUSED_MEMORY_RECENCY_WEIGHT": "0.5", "FUSED_MEMORY_RECENCY_HALF_LIFE_DAYS": "90",
                                 "FUSED_MEMORY_RERANK_TIMEOUT": "1.5"})
    assert (cfg.recency_weight, cfg.recency_half_life_days, cfg.rerank_timeout_s) == (0.5, 90.0, 1.5)
    with pytest.raises(ConfigurationError, match="FUSED_MEMORY"):
        FusionConfig.from_env({"FUSED_MEMORY_RECENCY_WEIGHT": "lots"})


@pytest.mark.parametrize("name", ["recency", "rerank", "collapse"])
def test_custom_arms_cannot_take_the_stage_names(name):
    with pytest.raises(ConfigurationError, match="reserved"):
        FusionConfig().check_arms(frozenset({name}))


@pytest.mark.parametrize(("kwargs", "field"), [({"recency": -1}, "recency"), ({"recency": math.nan}, "recency"),
                                               ({"recency": "high"}, "recency"), ({"collapse": "no"}, "collapse"),
                                               ({"reranker": object()}, "reranker")])
def test_bad_per_call_options_are_query_errors(kwargs, field):
    with pytest.raises(QueryError, match=field):
        check_after(**kwargs)


class Scorer:
    def rerank(self, query, texts):
        return [float(len(t)) for t in texts]


def test_a_reranker_is_taken_as_is_and_named_by_its_type():
    r = Scorer()
    assert isinstance(r, Reranker) and as_reranker(r) is r and reranker_name(r) == "Scorer"
    assert check_after(reranker=r).reranker is r


@pytest.mark.parametrize(("answer", "message"), [
    ([1.0], "1 scores for 2 texts"), ([1.0, 2.0, 3.0], "3 scores for 2 texts"), ([1.0, math.nan], "not a finite"),
    ([1.0, math.inf], "not a finite"), ([1.0, "2"], "not a number"), ([True, 1.0], "not a number"),
    ("12", "not a list"), (None, "not a list"), (3.0, "not a list")])
def test_garbage_answers_are_refused(answer, message):
    with pytest.raises(BackendError, match=message):
        check_scores(answer, 2, "R")


def test_array_answers_are_read_as_floats():
    assert check_scores(np.array([0.5, 2], dtype=np.float32), 2, "R") == (0.5, 2.0)
    assert check_scores((np.int64(3), 1), 2, "R") == (3.0, 1.0)


@pytest.mark.parametrize(("query", "boosted"), [
    ("where do I live now?", True), ("what is my current editor?", True), ("do I still play tennis?", True),
    ("what's the latest on the migration?", True), ("where is Sarah based these days?", True),
    ("which games does Nate play at the moment?", True), ("does Tom work there anymore?", True),
    ("where do I live?", False), ("What is John currently doing as a volunteer in August 2023?", False),
    ("when did I move to Munich?", False), ("I know where you live", False)])
def test_the_optimizer_raises_recency_for_questions_about_the_present(query, boosted):
    parsed = parse_query(query, now=NOW)
    plan = optimize(parsed)
    assert ("current_state_recency" in fired_rules(plan)) is boosted
    job = Job(parsed, plan, "ns", 10, [], 0.0)
    cfg = FusionConfig(recency_weight=0.5, current_state_recency=6.0)
    about_then = parsed.temporal_window is not None and "2023" in query or query.startswith("when")
    assert recency_weight(job, cfg) == (6.0 if boosted else 0.0 if about_then else 0.5)
    if boosted:
        assert any(r.startswith("current_state_recency: ") and "current state" in r for r in plan.reasons)


def test_the_callers_recency_wins_and_the_optimizer_off_does_not_boost():
    parsed = parse_query("where do I live now?", now=NOW)
    job = Job(parsed, optimize(parsed), "ns", 10, [], 0.0)
    job.after = check_after(recency=0.0)
    assert recency_weight(job, FusionConfig()) == 0.0
    off = Job(parsed, optimize_off(parsed), "ns", 10, [], 0.0)
    assert recency_weight(off, FusionConfig(recency_weight=0.5)) == 0.5
    assert recency_weight(Job(parsed, optimize(parsed), "ns", 10, [], 0.0), FusionConfig(current_state_recency=0)) == 0
