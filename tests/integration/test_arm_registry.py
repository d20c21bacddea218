"""A sixth arm through the registry, end to end: planned by its own rule, built, fused, explained,
weighed by the config, read by the learned order by name (or refused, naming it), and served by both
frameworks' retriever classes. The arm is `toy_arm.py`; its one registration is `REGISTRY` below."""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pytest
from toy_arm import PINNED, pinned_when_asked

from fused_memory import ARMS, BUILTIN_ARMS, ArmRegistry, ConfigurationError, EnsembleMemory, FusionConfig, Memory
from fused_memory.ensemble.caller_plan import CALLER_ARMS
from fused_memory.ranking import Ranker, feature_names
from fused_memory.ranking.features import candidate_features
from fused_memory.retrievers import make_retriever

NOW = datetime(2026, 3, 20, 12, tzinfo=timezone.utc)
REGISTRY = BUILTIN_ARMS.with_(PINNED)  # the registration
ASKS = "what is important about the Berlin trip?"


@pytest.fixture
def filled(store):
    store.add([
        Memory(text="Booked the hotel for the Berlin trip", namespace="n", id="hotel", created_at=NOW),
        Memory(text="Passport expires in May, renew before the Berlin trip", namespace="n", id="passport",
               metadata={"pinned": True}, created_at=NOW),
        Memory(text="Lunch with Sarah was fun", namespace="n", id="lunch", created_at=NOW),
    ])
    return store


def _rrf(store, **kw) -> EnsembleMemory:
    return EnsembleMemory(store, FusionConfig(order="rrf", **kw), registry=REGISTRY)


# ------------------------------------------------------------------ planned by its own rule
def test_the_arms_rule_plans_it_when_the_question_asks_and_says_why(filled) -> None:
    _, plan = _rrf(filled).plan(ASKS, namespace="n", now=NOW)
    assert plan.arms[-1] == "pinned" and pinned_when_asked.__name__ in plan.fired
    assert plan.weights["pinned"] == 1.0


def test_a_question_that_does_not_ask_skips_it_with_what_it_needs(filled) -> None:
    _, plan = _rrf(filled).plan("hotel in Berlin", namespace="n", now=NOW)
    assert "pinned" not in plan.arms and plan.skipped["pinned"] == PINNED.needs


def test_the_five_built_ins_never_plan_it(filled) -> None:
    _, plan = EnsembleMemory(filled, FusionConfig(order="rrf")).plan(ASKS, namespace="n", now=NOW)
    assert set(plan.arms) | set(plan.skipped) == set(ARMS)


# ------------------------------------------------------------------ fused and explained
def test_its_hits_are_fused_and_explained_like_any_arms(filled) -> None:
    result = _rrf(filled).retrieve(ASKS, namespace="n", now=NOW)
    top = result.hits[0]
    assert top.memory.id == "passport" and "pinned#1(1.00" in top.explain()
    share = next(c for c in top.contributions if c.arm == "pinned")
    assert share.weight == PINNED.weight and result.timings_ms["pinned"] >= 0


def test_the_config_weighs_it_and_refuses_a_misspelled_name(filled) -> None:
    louder = _rrf(filled, weights={"pinned": 3.0}).retrieve(ASKS, namespace="n", now=NOW)
    assert next(c for c in louder.hits[0].contributions if c.arm == "pinned").weight == 3.0
    with pytest.raises(ConfigurationError, match="pinnned"):
        _rrf(filled, weights={"pinnned": 3.0})


def test_a_caller_can_ask_for_it_alone(filled) -> None:
    alone = _rrf(filled).retrieve(ASKS, namespace="n", now=NOW, arms=["pinned"])
    assert [h.memory.id for h in alone.hits] == ["passport"]
    assert isinstance(make_retriever(filled, "pinned", REGISTRY), PINNED.make)


def test_with_the_optimizer_off_it_runs_on_every_query_as_every_arm_that_can(filled) -> None:
    ens = EnsembleMemory(filled, FusionConfig(order="rrf"), optimizer=False, registry=REGISTRY)
    result = ens.retrieve("anything", namespace="n", now=NOW, arms=["pinned"])
    assert [h.memory.id for h in result.hits] == ["passport"] and "pinned" in result.plan.arms


# ------------------------------------------------------------------ the learned order: by name, or refused
def test_a_ranker_trained_without_it_is_refused_naming_the_arm(filled) -> None:
    with pytest.raises(ConfigurationError, match=r"no features for arm\(s\) \['pinned'\]"):
        EnsembleMemory(filled, registry=REGISTRY)  # the shipped ranker knows the five


def test_a_ranker_trained_with_it_reads_its_columns_by_name(filled) -> None:
    arms = REGISTRY.names
    names = feature_names(arms)
    assert names[:5 * len(arms)][-5:] == tuple(f"pinned_{f}" for f in ("present", "rrank", "score", "wpresent", "rel"))
    w = np.zeros(len(names))
    w[names.index("pinned_present")] = 1.0
    ranker = Ranker(w, np.zeros(len(names)), np.ones(len(names)), 0.0, "pinned-aware", arms=arms)
    result = EnsembleMemory(filled, registry=REGISTRY, ranker=ranker).retrieve(ASKS, namespace="n", now=NOW)
    top = result.hits[0]
    assert top.memory.id == "passport" and top.learned is not None
    assert top.learned.top(1) == (("pinned_present", 1.0),)


def test_the_five_arm_features_are_unchanged_by_the_sixth(filled) -> None:
    ens = _rrf(filled)
    result = ens.retrieve(ASKS, namespace="n", now=NOW)
    fused = [type("F", (), {"memory_id": h.memory.id, "score": h.score, "contributions": h.contributions})()
             for h in result.hits]
    five = candidate_features(fused, {}, result.plan, result.parsed)
    six = candidate_features(fused, {}, result.plan, result.parsed, REGISTRY.names)
    assert five.shape[1] == len(feature_names(ARMS)) and six.shape[1] == five.shape[1] + 5
    assert np.array_equal(six[:, 5 * len(REGISTRY.names):], five[:, 5 * len(ARMS):])


# ------------------------------------------------------------------ the frameworks
def test_langchain_and_llamaindex_serve_it_with_a_class_of_its_name(filled) -> None:
    from llama_index.core.schema import QueryBundle

    from langchain_fused_memory import arm_retriever as lc_arm
    from llama_index.retrievers.fused_memory import arm_retriever as li_arm

    # a single-arm retriever runs on an ensemble without the optimizer (every arm that can run), as the
    # frameworks' own defaults do (`fused_memory.adapters.resolve_ensemble`)
    ens = EnsembleMemory(filled, FusionConfig(order="rrf"), optimizer=False, registry=REGISTRY)
    lc_cls, li_cls = lc_arm("pinned", REGISTRY), li_arm("pinned", REGISTRY)
    assert lc_cls.__name__ == li_cls.__name__ == "PinnedMemoryRetriever" and lc_cls.arm == li_cls.arm == "pinned"
    docs = lc_cls(ensemble=ens, namespace="n", now=NOW).invoke("anything")
    assert [d.metadata["memory_id"] for d in docs] == ["passport"]
    nodes = li_cls(ensemble=ens, namespace="n", now=NOW).retrieve(QueryBundle("anything"))
    assert [n.node.metadata["memory_id"] for n in nodes] == ["passport"]


def test_a_registry_refuses_a_name_twice_or_reserved(filled) -> None:
    with pytest.raises(ConfigurationError, match="registered twice"):
        REGISTRY.with_(PINNED)
    with pytest.raises(ConfigurationError, match="reserved"):
        type(PINNED)("recency", PINNED.make)
    with pytest.raises(ConfigurationError, match="ArmRegistry"):
        EnsembleMemory(filled, registry="pinned")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="unknown retriever 'pinnned'"):
        make_retriever(filled, "pinnned", REGISTRY)
    assert isinstance(REGISTRY, ArmRegistry) and REGISTRY.names == (*ARMS, "pinned")


def test_a_framework_gets_one_class_per_arm_and_registry(filled) -> None:
    from langchain_fused_memory import arm_retriever as lc_arm

    assert lc_arm("pinned", REGISTRY) is lc_arm("pinned", REGISTRY)  # isinstance checks keep working
    assert lc_arm("pinned", REGISTRY) is lc_arm("pinned", BUILTIN_ARMS.with_(PINNED))  # an equal registry


def test_a_retriever_for_an_arm_its_ensemble_lacks_is_refused_when_built(filled) -> None:
    from langchain_fused_memory import arm_retriever as lc_arm

    # built on the store alone, the retriever's ensemble is the default one, which has no pinned arm:
    # refused now, naming the arm and the way out, not on the first query (pydantic's ValidationError,
    # a ValueError, as LangChain reports any field it refuses)
    with pytest.raises(ValueError, match=r"no arm 'pinned'.*ensemble="):
        lc_arm("pinned", REGISTRY)(store=filled, namespace="n", now=NOW)


def test_arms_the_caller_names_narrow_the_plan_and_one_the_rules_skipped_says_why(filled) -> None:
    # the question gives the pinned arm's rule nothing to plan on: naming it does not force it (the
    # ensemble without one arm is the plan less that arm); the plan names it and the rule's reason
    result = _rrf(filled).retrieve("anything about lunch", namespace="n", now=NOW, arms=["pinned", "lexical"])
    assert result.plan.arms == ("lexical",) and CALLER_ARMS in result.plan.fired
    assert "pinned" in result.plan.skipped and "pinned: skipped by the rules" in result.plan.reasons[-1]
    assert result.ids() == ["lunch"]
