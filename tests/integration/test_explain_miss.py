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
