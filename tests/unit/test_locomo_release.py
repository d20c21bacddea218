"""`fused-memory eval --locomo locomo10.json` reads the public LoCoMo release as it is: converting
the release file gives exactly the memories and queries of the evaluation JSONL built from it
(../shared/bench/locomo/README.md says how), so a user needs no conversion script. Uses the five
public conversations (`locomo10_public.json`, the release's own format); skipped nowhere: the
files are part of the development checkout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fused_memory.cli import main
from fused_memory.evaluation import load_dataset
from fused_memory.evaluation.data import EvalDataError
from fused_memory.evaluation.locomo import load_locomo

LOCOMO = Path(__file__).resolve().parents[2].parent / "shared" / "bench" / "locomo"
RELEASE = LOCOMO / "locomo10_public.json"


def test_the_release_converts_to_the_public_jsonl_exactly() -> None:
    ours = load_locomo(RELEASE)
    theirs = load_dataset(LOCOMO / "public" / "memories.jsonl", LOCOMO / "public" / "queries.jsonl")
    assert ours.memories == theirs.memories  # ids, sessions, speakers, "Speaker: text [image: ...]", times
    assert ours.queries == theirs.queries  # categories, gold ids (split, repaired, dangling ones dropped), now
    assert len(ours.memories) == 2760 and len(ours.queries) == 999


def test_conversations_pick_a_subset_and_an_unknown_one_is_named() -> None:
    two = load_locomo(RELEASE, ["conv-30", "conv-26"])
    assert two.conversations() == ("conv-26", "conv-30")  # the release's order
    assert {q.conversation_id for q in two.queries} == {"conv-26", "conv-30"}
    with pytest.raises(EvalDataError, match=r"conv-99.*conv-26, conv-30"):
        load_locomo(RELEASE, ["conv-99"])


def test_a_file_of_another_shape_is_refused_with_what_was_expected(tmp_path: Path) -> None:
    bad = tmp_path / "other.json"
    bad.write_text(json.dumps([{"qa": [], "no_conversation": {}}]))
    with pytest.raises(EvalDataError, match="other.json: entry 0.*'conversation'"):
        load_locomo(bad)


def test_eval_refuses_locomo_beside_jsonl_inputs(capsys: pytest.CaptureFixture) -> None:
    assert main(["eval", "--locomo", str(RELEASE), "--memories", "m.jsonl", "--queries", "q.jsonl"]) == 2
    assert "--locomo" in capsys.readouterr().err
    assert main(["eval", "--conversations", "conv-26"]) == 2
    assert "--locomo" in capsys.readouterr().err


@pytest.mark.slow
def test_eval_runs_on_the_release_file(capsys: pytest.CaptureFixture) -> None:
    argv = ["eval", "--locomo", str(RELEASE), "--conversations", "conv-26", "--arms", "lexical", "--no-ablations",
            "--json", "-", "--quiet"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["config"]["locomo"] == str(RELEASE) and report["config"]["conversations"] == "conv-26"
    assert report["n_queries"] == sum(1 for q in load_locomo(RELEASE, ["conv-26"]).queries if q.gold_ids)
