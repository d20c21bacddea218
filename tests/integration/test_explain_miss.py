"""Why was this not recalled? (`EnsembleMemory.explain_miss`): for one memory, each arm's rank and
score, or the true reason it did not return it, each case built so that reason is the true one;
fusion's and the learned order's places; what the stage after fusion did to it. Real store."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from fused_memory import EnsembleMemory, FusionConfig, Hit, Memory, MemoryStore, MemoryType, QueryError
from fused_memory.ensemble.misses import MissReason

pytestmark = pytest.mark.slow
NOW = datetime(2026, 6, 10, 18, 0, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    with MemoryStore.embedded(tmp_path_factory.mktemp("miss")) as s:
        s.add([Memory(text=t, namespace="m", id=i, created_at=NOW - timedelta(days=d), type=ty) for i, t, d, ty in [
            ("desks", "Told Sarah Chen the Berlin office needs two more desks.", 3, None),
            ("badge", "My badge ID is E-47821.", 300, MemoryType.FACT),
            ("lake", "Walked the dog by the lake.", 30, None),
            ("tea", "I prefer green tea in the afternoon.", 100, None),
            ("home1", "I live in Leeds.", 600, None),
            ("home2", "We moved from Leeds to York.", 20, None),
            ("copy1", "User prefers window seats on flights.", 50, None),
            ("copy2", "User prefers window seats on flights!", 10, None),
        ]])
        yield s


@pytest.fixture(scope="module")
def ens(store: MemoryStore):  # noqa: ANN201
    e = EnsembleMemory(store)
    yield e
    e.close()


def verdict(why, arm):  # noqa: ANN001, ANN201
    return next(v for v in why.arms if v.arm == arm)


def test_a_recalled_memory_shows_its_arms_and_its_rank(ens: EnsembleMemory) -> None:
    why = ens.explain_miss("what did I tell Sarah about the Berlin office?", "desks", namespace="m", k=3, now=NOW)
    assert why.recalled and why.final_rank == 1 and verdict(why, "dense").reason is MissReason.FOUND
    assert verdict(why, "dense").rank == 1 and why.rrf_rank == 1 and "#1 in the top 3" in why.explain()


def test_skipped_by_the_optimizer_and_why(ens: EnsembleMemory) -> None:
    why = ens.explain_miss("green tea", "lake", namespace="m", k=1, now=NOW)
    graph = verdict(why, "graph")
    assert graph.reason is MissReason.SKIPPED and "no entity" in graph.detail
    empty = ens.explain_miss("what did I do yesterday?", "lake", namespace="m", k=1, now=NOW)
    assert "holds no memory" in verdict(empty, "temporal").detail  # nothing yesterday: the window was soft


def test_no_word_and_no_entity_in_common(ens: EnsembleMemory) -> None:
    why = ens.explain_miss("what did I tell Sarah Chen?", "lake", namespace="m", k=1, now=NOW)
    assert verdict(why, "lexical").reason is MissReason.NO_WORD
    graph = verdict(why, "graph")
    assert graph.reason is MissReason.NO_ENTITY and "Sarah" in graph.detail


def test_outside_the_window(ens: EnsembleMemory) -> None:
    why = ens.explain_miss("what did I do last week?", "lake", namespace="m", k=5, now=NOW)
    temporal = verdict(why, "temporal")
    assert temporal.reason is MissReason.OUTSIDE_WINDOW and "said May 11" in temporal.detail


def test_filtered_out_by_the_callers_types(ens: EnsembleMemory) -> None:
    why = ens.explain_miss("green tea", "tea", namespace="m", k=5, now=NOW, types=["fact"])
    dense = verdict(why, "dense")
    assert dense.reason is MissReason.TYPE_FILTERED and "preference" in dense.detail and not why.recalled


def test_below_the_arms_depth_with_its_own_score(store: MemoryStore) -> None:
    ens = EnsembleMemory(store, FusionConfig(depth=1, order="rrf"))
    try:
        why = ens.explain_miss("window seats", "badge", namespace="m", k=1, now=NOW)
        dense = verdict(why, "dense")
        assert dense.reason is MissReason.BELOW_DEPTH and "its cosine" in dense.detail and "kept 1" in dense.detail
    finally:
        ens.close()


def test_superseded_and_collapsed_after_fusion(ens: EnsembleMemory) -> None:
    old = ens.explain_miss("where do I live?", "home1", namespace="m", k=1, now=NOW)
    assert any("superseded by home2" in note for note in old.after) and not old.recalled
    assert any(m.step == "versions_ordered" for m in old.moves)
    copy = ens.explain_miss("window seats on flights", "copy1", namespace="m", k=5, now=NOW)
    assert any("collapsed into copy2" in note for note in copy.after)


def test_a_failed_arm_says_so(store: MemoryStore) -> None:
    class Broken:
        name = "mine"

        def search(self, request) -> list[Hit]:  # noqa: ANN001
            raise RuntimeError("index offline")

    ens = EnsembleMemory(store, arms={"mine": Broken()})
    try:
        why = ens.explain_miss("green tea", "tea", namespace="m", k=3, now=NOW)
        mine = verdict(why, "mine")
        assert mine.reason is MissReason.FAILED and "index offline" in mine.detail and why.recalled
    finally:
        ens.close()


def test_an_unknown_memory_and_bad_input(ens: EnsembleMemory) -> None:
    why = ens.explain_miss("green tea", "nope", namespace="m", k=3, now=NOW)
    assert why.memory is None and "no such memory" in why.explain()
    with pytest.raises(QueryError):
        ens.explain_miss("green tea", "", namespace="m", now=NOW)
    with pytest.raises(QueryError):
        ens.explain_miss("green tea", "tea", namespace="m", k=0, now=NOW)


def test_the_cli_why_not(tmp_path, capsys) -> None:  # noqa: ANN001
    from fused_memory.cli import main

    path = tmp_path / "store"
    (tmp_path / "m.jsonl").write_text('{"id": "lake", "text": "Walked the dog by the lake."}\n'
                                      '{"id": "tea", "text": "I prefer green tea."}\n')
    assert main(["ingest", str(tmp_path / "m.jsonl"), "--path", str(path)]) == 0
    assert main(["query", "green tea", "--path", str(path), "--k", "1", "--why-not", "lake"]) == 0
    out = capsys.readouterr().out
    assert "lake: not in the top 1" in out and "lexical: no word in common" in out
    assert main(["query", "green tea", "--path", str(path), "--why-not", "nope"]) != 0


def test_an_arm_that_found_fewer_than_its_depth_did_not_return_it(store: MemoryStore) -> None:
    # a custom arm that returns one memory of the eight: asked for 50, it left the others out; they
    # were not below its depth
    class OnlyTea:
        name = "tea"

        def search(self, request) -> list[Hit]:  # noqa: ANN001
            return [Hit("tea", 0.9)]

    ens = EnsembleMemory(store, FusionConfig(order="rrf"), arms={"tea": OnlyTea()})
    try:
        why = ens.explain_miss("green tea", "lake", namespace="m", k=1, now=NOW)
    finally:
        ens.close()
    tea = verdict(why, "tea")
    assert tea.reason is MissReason.NOT_RETURNED and "kept 1 of the 50 it was asked for" in tea.detail


def test_a_when_question_reads_the_time_the_text_states(tmp_path) -> None:  # noqa: ANN001
    # the temporal arm's "when" mode ranks memories whose text states a time; a memory with an
    # event time but no time in its words states none, and one whose words state a time does
    with MemoryStore.embedded(tmp_path) as store:
        store.add([Memory(text="Bought new running shoes", namespace="n", id="shoes", event_at=NOW - timedelta(days=3),
                          created_at=NOW - timedelta(days=2)),
                   Memory(text="Since Tuesday I have been sick", namespace="n", id="sick",
                          created_at=NOW - timedelta(days=1)),
                   Memory(text="Went hiking in the hills", namespace="n", id="hike",
                          created_at=NOW - timedelta(days=1))])
        ens = EnsembleMemory(store)
        shoes = verdict(ens.explain_miss("when did I buy running shoes?", "shoes", namespace="n", k=1, now=NOW),
                        "temporal")
        sick = verdict(ens.explain_miss("when did I buy running shoes?", "sick", namespace="n", k=1, now=NOW),
                       "temporal")
        ens.close()
    assert shoes.reason is MissReason.NO_TIME
    assert sick.reason is not MissReason.NO_TIME  # "since Tuesday" states a time: the arm could rank it


def test_a_score_below_the_floor_is_named(ens: EnsembleMemory) -> None:
    plain = ens.explain_miss("green tea", "lake", namespace="m", k=10, now=NOW)
    assert plain.recalled  # eight memories, k=10: every one with a score above 0 is a hit
    floored = ens.explain_miss("green tea", "lake", namespace="m", k=10, now=NOW, min_score=0.5)
    assert not floored.recalled and any("below the floor (min_score 0.5)" in note for note in floored.after)


def test_a_shortcut_failure_is_not_blamed_on_the_full_plans_arm(store: MemoryStore, monkeypatch) -> None:  # noqa: ANN001
    from fused_memory.retrievers import scan

    def broken(self, request):  # noqa: ANN001, ANN202
        raise RuntimeError("scan broke")

    monkeypatch.setattr(scan.TimeOrderRetriever, "search", broken)  # the time plan's scan, not a backend
    ens = EnsembleMemory(store)
    try:
        result = ens.retrieve("what did I do last month?", namespace="m", k=10, now=NOW)
        assert any(f.kind == "shortcut" for f in result.failures)  # the time plan failed, the full plan ran
        why = ens.explain_miss("what did I do last month?", "badge", namespace="m", k=10, now=NOW)
        assert verdict(why, "temporal").reason is not MissReason.FAILED
    finally:
        ens.close()


def test_a_registered_arm_the_plan_skipped_is_listed(store: MemoryStore) -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from toy_arm import PINNED

    from fused_memory import BUILTIN_ARMS

    ens = EnsembleMemory(store, FusionConfig(order="rrf"), registry=BUILTIN_ARMS.with_(PINNED))
    try:
        pinned = verdict(ens.explain_miss("green tea", "lake", namespace="m", k=1, now=NOW), "pinned")
        assert pinned.reason is MissReason.SKIPPED and pinned.detail == PINNED.needs
    finally:
        ens.close()
