"""The ensemble's own inputs: custom arms, configuration and construction. Each case was found by
probing the Python API: a custom arm under a new name never ran, one returning something other than
hits failed the whole query in fusion, an infinite timeout (which FusionConfig allows: "wait") broke
the sync path only, and bad settings were accepted and failed inside the first query."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fused_memory.config import FusionConfig
from fused_memory.ensemble import EnsembleMemory
from fused_memory.errors import ConfigurationError, QueryError
from fused_memory.results import Hit
from fused_memory.store.memory_store import MemoryStore
from fused_memory.types import Memory

from _support import NOW, embedded

NS = "custom"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    s = embedded(tmp_path / "store").open()
    s.add([Memory(text="badge ID is 47821", namespace=NS, id="m-badge"),
           Memory(text="I prefer dark mode in every editor", namespace=NS, id="m-pref"),
           Memory(text="the Kestrel launch slipped to June", namespace=NS, id="m-slip")])
    yield s
    s.close()


class Pinned:
    """A caller's arm: always answers one memory (as a business-rules or recency arm might)."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def search(self, request: object) -> Any:
        return self.answer


def test_a_custom_arm_under_a_new_name_runs_and_is_explained(store: MemoryStore) -> None:
    ens = EnsembleMemory(store, arms={"pinned": Pinned([Hit("m-pref", 1.0)])})
    try:
        result = ens.retrieve("badge", namespace=NS, k=3, now=NOW)
        assert "pinned" in result.plan.arms and not result.failures
        pref = next(h for h in result.hits if h.memory.id == "m-pref")
        assert "pinned" in [c.arm for c in pref.contributions]
        assert ens.retrieve("badge", namespace=NS, k=3, now=NOW, arms=["pinned"]).ids() == ["m-pref"]
        # plan() shows the plan retrieve runs: with the custom arm, and only the arms asked for
        assert ens.plan("badge", namespace=NS, now=NOW)[1] == result.plan
        assert ens.plan("badge", namespace=NS, now=NOW, arms=["pinned"])[1].arms == ("pinned",)
        with pytest.raises(QueryError, match=r"custom arms \['pinned'\]"):
            ens.plan("badge", namespace=NS, now=NOW, arms=["pined"])
    finally:
        ens.close()


class Slow(Pinned):
    """A custom arm that answers late (a remote business-rules service on a bad day)."""

    def search(self, request: object) -> Any:
        import time

        time.sleep(2.0)
        return self.answer


def test_a_custom_arm_takes_its_weight_and_timeout_from_the_config(store: MemoryStore) -> None:
    """A custom arm under a new name could not be weighted or timed: FusionConfig refused the name."""
    # Pinned answers well within the timeout, even on a loaded host; Slow does not
    config = FusionConfig(weights={"pinned": 4.0}, timeouts_s={"pinned": 0.5})
    ens = EnsembleMemory(store, config, arms={"pinned": Pinned([Hit("m-pref", 1.0)])})
    try:
        pref = next(h for h in ens.retrieve("badge", namespace=NS, k=3, now=NOW).hits if h.memory.id == "m-pref")
        vote = next(c for c in pref.contributions if c.arm == "pinned")
        assert vote.weight == pytest.approx(4.0)
        assert vote.contribution == pytest.approx(4.0 * 1.0 / (config.k + 1))
    finally:
        ens.close()
    late = EnsembleMemory(store, config, arms={"pinned": Slow([Hit("m-pref", 1.0)])})
    try:
        result = late.retrieve("badge 47821", namespace=NS, k=3, now=NOW)
        assert [(f.arm, f.kind) for f in result.failures] == [("pinned", "timeout")] and result.hits
    finally:
        late.close()


@pytest.mark.parametrize("table", ["weights", "timeouts_s"])
def test_an_arm_name_the_ensemble_does_not_have_is_refused_when_built(store: MemoryStore, table: str) -> None:
    config = FusionConfig(**{table: {"lexcial": 1.0}})  # a typo, or a custom arm that was not given
    with pytest.raises(ConfigurationError, match="lexcial"):
        EnsembleMemory(store, config)
    with pytest.raises(ConfigurationError, match="lexcial"):
        EnsembleMemory(store, config, arms={"pinned": Pinned([])})
    with pytest.raises(ConfigurationError):
        FusionConfig(**{table: {"": 1.0}})
    # a copy reconfigured after it was built: checked on its next query, not ignored
    import copy
    from dataclasses import replace

    ens = EnsembleMemory(store)
    twin = copy.copy(ens)
    twin.config = replace(ens.config, **{table: {"lexcial": 1.0}})
    try:
        with pytest.raises(ConfigurationError, match="lexcial"):
            twin.retrieve("badge", namespace=NS, k=3, now=NOW)
    finally:
        ens.close()
        twin.close()


@pytest.mark.parametrize("answer", [None, [1, 2], ["m-pref"], "m-pref"])
async def test_a_custom_arm_that_answers_garbage_fails_alone(store: MemoryStore, answer: Any) -> None:
    ens = EnsembleMemory(store, arms={"lexical": Pinned(answer)})
    try:
        for result in (ens.retrieve("badge 47821", namespace=NS, k=3, now=NOW),
                       await ens.aretrieve("badge 47821", namespace=NS, k=3, now=NOW)):
            assert [(f.arm, f.kind) for f in result.failures] == [("lexical", "error")]
            assert "not a list of Hit" in result.failures[0].reason and result.hits
    finally:
        ens.close()


async def test_an_infinite_timeout_waits_in_both_paths(store: MemoryStore) -> None:
    ens = EnsembleMemory(store, FusionConfig(timeouts_s={"dense": float("inf"), "lexical": float("inf")}))
    try:
        sync = ens.retrieve("badge 47821", namespace=NS, k=3, now=NOW)
        assert not sync.failures and sync.ids() == (await ens.aretrieve("badge 47821", namespace=NS, k=3,
                                                                          now=NOW)).ids()
    finally:
        ens.close()


def test_a_query_after_close_starts_a_new_pool(store: MemoryStore) -> None:
    ens = EnsembleMemory(store)
    first = ens.retrieve("badge", namespace=NS, k=3, now=NOW)
    ens.close()
    assert ens.retrieve("badge", namespace=NS, k=3, now=NOW).ids() == first.ids()
    ens.close()


@pytest.mark.parametrize("kwargs", [{"depth": "5"}, {"depth": 1.5}, {"max_query_chars": 0}, {"max_query_chars": "x"},
                                    {"widen_below": 2.5}, {"k": True}, {"weights": None},
                                    {"weights": {"dense": "abc"}}, {"timeouts_s": {"dense": "1"}}])
def test_a_bad_setting_is_refused_when_written(kwargs: dict) -> None:
    with pytest.raises(ConfigurationError):
        FusionConfig(**kwargs)


def test_a_bad_ensemble_is_refused_when_built(store: MemoryStore) -> None:
    for build in (lambda: EnsembleMemory(None),  # type: ignore[arg-type]
                  lambda: EnsembleMemory(store, {"k": 5}),  # type: ignore[arg-type]
                  lambda: EnsembleMemory(store, max_workers=0)):
        with pytest.raises(ConfigurationError):
            build()


def test_numpy_numbers_and_a_tuple_of_hits_are_taken(store: MemoryStore) -> None:
    """The checks above must not refuse numpy numbers or a tuple of hits."""
    import numpy as np

    config = FusionConfig(depth=np.int64(30), widen_below=np.int32(5), max_query_chars=np.int64(5000))
    assert (config.depth, type(config.depth)) == (30, int)
    ens = EnsembleMemory(store, config, arms={"pinned": Pinned((Hit("m-pref", 1.0),))})
    try:
        assert ens.retrieve("badge", namespace=NS, k=3, now=NOW, arms=["pinned"]).ids() == ["m-pref"]
    finally:
        ens.close()


def test_closing_while_others_query_fails_none_of_them(store: MemoryStore) -> None:
    """close() must not cancel other threads' queued arms (they would be reported as failed arms),
    a submit racing it must not raise RuntimeError, and concurrent first queries make one pool."""
    import threading

    ens = EnsembleMemory(store)
    pools = []
    starters = [threading.Thread(target=lambda: pools.append(ens._pool())) for _ in range(8)]
    for t in starters:
        t.start()
    for t in starters:
        t.join()
    assert len({id(p) for p in pools}) == 1
    errors: list[BaseException] = []
    failed: list[object] = []

    def ask() -> None:
        for _ in range(15):
            try:
                failed.extend(ens.retrieve("badge 47821", namespace=NS, k=3, now=NOW).failures)
            except BaseException as exc:  # noqa: BLE001 - the test collects what escaped
                errors.append(exc)

    askers = [threading.Thread(target=ask) for _ in range(6)]
    for t in askers:
        t.start()
    for _ in range(15):
        ens.close()
    for t in askers:
        t.join(timeout=60)
    ens.close()
    assert not errors and not failed, (errors[:3], failed[:3])
