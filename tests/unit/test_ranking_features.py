"""The learned order's features, at formula level: what each column of a candidate's row holds."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import numpy as np
import pytest

from fused_memory.ensemble.fusion import fuse
from fused_memory.ranking import FEATURE_GROUPS, FEATURE_NAMES, candidate_features
from fused_memory.ranking.model import Ranker
from fused_memory.ranking.order import learned_order
from fused_memory.results import EntityCandidate, EntityRef, Hit, ParsedQuery, QueryPlan

NOW = datetime(2024, 5, 15, tzinfo=timezone.utc)
DAY = 86400.0


def _row(x: np.ndarray, i: int) -> dict[str, float]:
    return dict(zip(FEATURE_NAMES, x[i].tolist(), strict=True))


def test_every_feature_is_in_one_group() -> None:
    grouped = [n for names in FEATURE_GROUPS.values() for n in names]
    assert sorted(grouped) == sorted(FEATURE_NAMES) and len(set(grouped)) == len(grouped)


def test_a_candidates_row() -> None:
    payload = {"text": "Alice met Bob in Paris", "type": "event", "event_at": NOW.timestamp() - 9 * DAY,
               "created_at": None, "entities": ["Alice", "Paris"], "answers": ["time"]}
    results = {"dense": [Hit("b", 0.8, payload={**payload, "text": "other"}), Hit("a", 0.4, payload=payload)],
               "lexical": [Hit("a", 0.9)],
               "graph": [Hit("c", 0.5)]}
    plan = QueryPlan(arms=("dense", "lexical", "graph"), weights={"dense": 2.0})
    parsed = ParsedQuery("when did Alice go to Paris?", NOW, answer_type="time",
                         entity_refs=(EntityRef("Alice", (EntityCandidate("e1", "Alice"),)),))
    fused = fuse(results, {"dense": 1.0, "lexical": 1.0, "graph": 1.0}, 10)
    assert [f.memory_id for f in fused] == ["a", "b", "c"]
    x = candidate_features(fused, results, plan, parsed)
    a, c = _row(x, 0), _row(x, 2)
    assert (a["dense_present"], a["dense_rrank"], a["dense_score"]) == (1.0, 0.5, 0.4)
    assert a["dense_rel"] == pytest.approx(0.5) and a["dense_wpresent"] == 2.0  # the plan's weight for dense
    assert (a["lexical_present"], a["lexical_rrank"], a["lexical_rel"]) == (1.0, 1.0, 1.0)
    assert a["graph_present"] == 0.0 and a["n_arms"] == 2.0
    assert (a["fused_rrank"], a["fused_logrank"], a["fused_rel"]) == (1.0, 0.0, 1.0)
    assert a["at_hand"] == 1.0 and a["log_len"] == pytest.approx(math.log1p(len(payload["text"])))
    assert a["log_age"] == pytest.approx(math.log1p(9.0)) and a["type_event"] == 1.0
    assert a["has_time"] == a["time_tag"] == a["asks_time_x_time_tag"] == a["asks_time_x_has_time"] == 1.0
    assert a["entity_overlap"] == 1.0  # "Alice"; "Paris" is not a name the query resolved
    assert a["window_x_temporal"] == 0.0  # no window
    # found by the graph alone: no payload at hand, so its memory features are 0 and say so
    assert c["at_hand"] == c["log_len"] == c["type_event"] == 0.0
    assert c["graph_present"] == c["entities_x_graph"] == 1.0 and c["fused_logrank"] == pytest.approx(math.log(3))


def test_the_order_reorders_only_the_top_depth_and_keeps_the_places_scores() -> None:
    results = {"dense": [Hit(f"m{i}", 1.0 - i / 10, payload={"text": "x" * (i + 1)}) for i in range(6)]}
    fused = fuse(results, {"dense": 1.0}, 10)
    w = np.zeros(len(FEATURE_NAMES))
    w[FEATURE_NAMES.index("log_len")] = 1.0  # longest first
    ranker = Ranker(w, np.zeros_like(w), np.ones_like(w), 0.0, "test")
    ordered, info = learned_order(ranker, fused, results, QueryPlan(arms=("dense",)), ParsedQuery("q", NOW), 3, 2)
    assert [f.memory_id for f in ordered] == ["m2", "m1", "m0", "m3", "m4", "m5"]
    assert [f.score for f in ordered] == [f.score for f in fused]
    assert set(info) == {"m2", "m1"} and info["m2"].rrf_rank == 3
