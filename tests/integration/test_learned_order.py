"""The learned order over the fused candidates, on real stores and the real ensemble.

What it promises: a ranker file is checked when the ensemble is built (missing, corrupt, another
feature version, another model family: `ConfigurationError` naming the file and the reason);
`order="rrf"` is score-weighted RRF exactly; the learned order reorders the fused top and says why
in `explain()`; a ranker that raises costs that query its order, never its answer (RRF's order, and
a "learned" failure); a user's reranker still orders the top after it; shortcut plans skip it.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

from fused_memory.config import FusionConfig
from fused_memory.ensemble import EnsembleMemory
from fused_memory.ensemble.learned import LEARNED
from fused_memory.errors import ConfigurationError
from fused_memory.ranking import FEATURE_NAMES, FEATURE_VERSION, Ranker, default_ranker, load_ranker
from fused_memory.ranking.model import FORMAT
from fused_memory.types import Memory

NOW = datetime(2024, 5, 15, 12, 0, tzinfo=timezone.utc)

TEXTS = [
    "Alice went hiking in the Alps with her sister last summer",
    "Alice said the hiking boots she bought were too small",
    "Bob cooked a spicy ramen for the whole hiking club",
    "The hiking club meets every Thursday evening near the lake in town",
    "Alice prefers green tea over coffee",
    "Bob is learning to play the cello",
    "Alice and Bob planned a hiking trip to Norway for next spring, with tents, maps and a long list of food",
    "The budget review moved to Thursday",
]


@pytest.fixture
def filled(store):
    store.add([Memory(text=t, namespace="n", id=f"m{i}", event_at=NOW) for i, t in enumerate(TEXTS)])
    return store


def _doc(**changes) -> dict:
    doc = default_ranker().to_json()
    doc.update(changes)
    return doc


def _write(tmp_path: Path, doc: object, name: str = "ranker.json") -> Path:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def _ids(result) -> list[str]:
    return [h.memory.id for h in result.hits]


# ------------------------------------------------------------------ the ranker file is checked at construction
@pytest.mark.parametrize("content, reason", [
    (None, "cannot be read"),
    ("{not json", "is not JSON"),
    ({"weights": [0.0]}, "not a ranker file"),
    ("feature_version", "feature version 'candidates-0'"),
    ("family", "model family 'lambdamart' cannot run here"),
    ("weights", "'weights' must hold"),
    ("scale", "'scale' must be positive"),
])
def test_a_bad_ranker_file_is_refused_when_the_ensemble_is_built(filled, tmp_path, content, reason) -> None:
    if content is None:
        path = tmp_path / "missing.json"
    elif content == "feature_version":
        path = _write(tmp_path, _doc(feature_version="candidates-0"))
    elif content == "family":
        path = _write(tmp_path, _doc(family="lambdamart"))
    elif content == "weights":
        path = _write(tmp_path, _doc(weights=[1.0, 2.0]))
    elif content == "scale":
        path = _write(tmp_path, _doc(scale=[0.0] * len(FEATURE_NAMES)))
    else:
        path = _write(tmp_path, content)
    for build in (lambda: EnsembleMemory(filled, ranker=path),
                  lambda: EnsembleMemory(filled, FusionConfig(ranker=str(path)))):
        with pytest.raises(ConfigurationError) as err:
            build()
        assert str(path) in str(err.value) and reason in str(err.value)


def test_order_and_ranker_settings_are_checked() -> None:
    with pytest.raises(ConfigurationError, match="order must be one of 'learned', 'rrf' or None"):
        FusionConfig(order="lambdamart")
    with pytest.raises(ConfigurationError, match="ranker must be a path"):
        FusionConfig(ranker=3)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="learned_depth must be an integer >= 1"):
        FusionConfig(learned_depth=0)


def test_the_shipped_ranker_is_this_versions(filled) -> None:
    shipped = default_ranker()
    assert shipped.to_json()["feature_version"] == FEATURE_VERSION and len(shipped.weights) == len(FEATURE_NAMES)
    assert EnsembleMemory(filled, FusionConfig(order="learned")).ranker is shipped
    assert EnsembleMemory(filled).ranker is shipped  # the default: the learned order (docs/results.md)
    assert EnsembleMemory(filled, FusionConfig(order="rrf")).ranker is None
    assert EnsembleMemory(filled, FusionConfig(order="rrf"), ranker=shipped).ranker is None  # "rrf" wins


def test_a_ranker_file_written_back_loads_the_same(tmp_path) -> None:
    path = _write(tmp_path, default_ranker().to_json())
    loaded = load_ranker(path)
    assert np.allclose(loaded.weights, default_ranker().weights, atol=1e-6) and loaded.source == str(path)


# ------------------------------------------------------------------ RRF stays one setting away
def test_order_rrf_is_score_weighted_rrf(filled) -> None:
    result = EnsembleMemory(filled, FusionConfig(order="rrf")).retrieve("hiking with Alice", namespace="n", now=NOW)
    assert result.hits and LEARNED not in result.timings_ms
    for h in result.hits:
        assert h.learned is None and "learned" not in h.explain()
        assert h.score == pytest.approx(math.fsum(c.contribution for c in h.contributions))
    assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)


def test_a_ranker_that_says_nothing_keeps_rrfs_order(filled) -> None:
    n = len(FEATURE_NAMES)
    flat = Ranker(np.zeros(n), np.zeros(n), np.ones(n), 0.0, "flat")
    rrf = EnsembleMemory(filled, FusionConfig(order="rrf")).retrieve("hiking with Alice", namespace="n", now=NOW)
    learned = EnsembleMemory(filled, ranker=flat).retrieve("hiking with Alice", namespace="n", now=NOW)
    assert _ids(learned) == _ids(rrf)
    # each place keeps its RRF score (qdrant-client's local mode reads cosines back ~1e-9 apart run to run)
    assert [h.score for h in learned.hits] == pytest.approx([h.score for h in rrf.hits], rel=1e-6)
    assert all(h.learned is not None and h.learned.rrf_rank == h.rank for h in learned.hits)


def _longest_first() -> Ranker:
    """A ranker that cares only about text length: its order is known in advance."""
    n = len(FEATURE_NAMES)
    w = np.zeros(n)
    w[FEATURE_NAMES.index("log_len")] = 1.0
    return Ranker(w, np.zeros(n), np.ones(n), 0.0, "longest-first")


def test_the_learned_order_reorders_the_fused_top_and_explains_it(filled) -> None:
    rrf = EnsembleMemory(filled, FusionConfig(order="rrf")).retrieve("hiking", namespace="n", now=NOW)
    result = EnsembleMemory(filled, ranker=_longest_first()).retrieve("hiking", namespace="n", now=NOW)
    found = {h.memory.id: h.memory.text for h in rrf.hits}
    assert set(_ids(result)) == set(found)  # the same candidates
    assert _ids(result) == sorted(found, key=lambda i: -len(found[i]))  # in the ranker's order
    assert _ids(result) != _ids(rrf)
    # the scores of the places, on RRF's scale
    assert [h.score for h in result.hits] == pytest.approx([h.score for h in rrf.hits], rel=1e-6)
    top = result.hits[0]
    by_id = {h.memory.id: h for h in rrf.hits}
    assert top.contributions == by_id[top.memory.id].contributions  # what each arm said is kept
    text = top.explain()
    assert text.startswith(by_id[top.memory.id].explain().split(" -> ")[0])  # the per-arm RRF breakdown
    assert f"learned {top.learned.score:+.2f} (rrf #{by_id[top.memory.id].rank}; log_len +" in text
    assert top.learned.top(1)[0][0] == "log_len"
    assert top.to_json()["learned_score"] == pytest.approx(top.learned.score)
    assert result.timings_ms[LEARNED] > 0


class _Raising(Ranker):
    def scores(self, x: np.ndarray) -> np.ndarray:
        raise FloatingPointError("the model blew up")


def test_a_ranker_that_raises_leaves_rrfs_order_and_says_so(filled) -> None:
    base = default_ranker()
    raising = _Raising(base.weights, base.mean, base.scale, base.bias, "raising")
    rrf = EnsembleMemory(filled, FusionConfig(order="rrf")).retrieve("hiking with Alice", namespace="n", now=NOW)
    result = EnsembleMemory(filled, ranker=raising).retrieve("hiking with Alice", namespace="n", now=NOW)
    assert _ids(result) == _ids(rrf)
    [failure] = [f for f in result.failures if f.arm == LEARNED]
    assert failure.kind == "error" and "FloatingPointError: the model blew up" in failure.reason
    assert "RRF's order stands" in failure.reason


def test_a_reranker_still_orders_the_top_after_the_learned_order(filled) -> None:
    class ShortestFirst:
        def rerank(self, query: str, texts: list[str]) -> list[float]:
            return [1.0 / len(t) for t in texts]

    ens = EnsembleMemory(filled, ranker=_longest_first(), reranker=ShortestFirst())
    result = ens.retrieve("hiking", namespace="n", now=NOW)
    texts = [h.memory.text for h in result.hits]
    assert texts == sorted(texts, key=len) and result.reranked_by is not None
    assert all(h.learned is not None for h in result.hits)  # the learned order ran first
    assert all(h.rank_before_rerank is not None for h in result.hits)


def test_one_arm_alone_and_shortcut_plans_keep_rrfs_order(filled) -> None:
    ens = EnsembleMemory(filled, ranker=_longest_first())
    solo = ens.retrieve("hiking", namespace="n", now=NOW, arms=["lexical"])
    assert solo.hits and all(h.learned is None for h in solo.hits) and LEARNED not in solo.timings_ms
    filled.add(Memory(text="ticket INC-4471 closed", namespace="n", id="t"))
    shortcut = ens.retrieve("INC-4471", namespace="n", now=NOW)
    assert shortcut.plan.shortcut is not None and LEARNED not in shortcut.timings_ms
    assert _ids(shortcut)[0] == "t"


def test_questions_about_the_current_state_are_reordered_and_still_answer_with_the_current_version(filled) -> None:
    # two versions of one fact; the ranker prefers the older, longer text, and the versions step still puts
    # the current one first (docs/design.md, "After fusion")
    filled.add([Memory(text="Alice hikes in the Alps on weekends with her whole climbing club", namespace="n",
                       id="v1", predicate="alice hikes", event_at=NOW - timedelta(days=300)),
                Memory(text="Alice hikes in the Dolomites on weekends", namespace="n", id="v2", predicate="alice hikes",
                       event_at=NOW - timedelta(days=3))])
    ens = EnsembleMemory(filled, ranker=_longest_first())
    now = ens.retrieve("Where does Alice hike now?", namespace="n", now=NOW)
    assert any(h.learned is not None for h in now.hits) and LEARNED in now.timings_ms
    ids = _ids(now)
    assert ids.index("v2") < ids.index("v1")


def test_a_ranker_file_of_another_feature_list_is_refused(tmp_path) -> None:
    doc = _doc(features=list(reversed(FEATURE_NAMES)))
    with pytest.raises(ConfigurationError, match="feature names differ"):
        load_ranker(_write(tmp_path, doc))
    assert default_ranker().to_json()["format"] == FORMAT
