"""What `fused-memory ingest`, `query` and `demo` refuse, and what they say: each case was found by
probing the CLI as a new user. A refusal is one line naming the flag or file:line, exit 2, and
nothing created or changed on disk."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fused_memory.cli import commands as cli
from fused_memory.cli import main
from fused_memory.ensemble.options import MAX_K


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize(("rows", "message"), [
    ([{"id": "d1", "text": "first"}, {"id": "d1", "text": "second"}],
     "ing.jsonl:2: duplicate id 'd1' in namespace 'default' (first at line 1)"),  # it kept only "second"
    ([{"text": "hi", "namespace": {"a": 1}}], "ing.jsonl:1: 'namespace' must be a string, got dict"),
    ([{"text": "hi", "session_id": ["a"]}], "ing.jsonl:1: 'session_id' must be a string, got list"),
    ([{"text": "hi", "id": True}], "ing.jsonl:1: 'id' must be a string, got bool"),
    ([{"text": "hi", "entities": {"Sarah": 1}}], "ing.jsonl:1: 'entities' must be a list of names, got dict"),
])
def test_ingest_refuses_rows_it_would_misread(tmp_path: Path, capsys: pytest.CaptureFixture, rows: list,
                                              message: str) -> None:
    f = _write(tmp_path / "ing.jsonl", rows)
    assert main(["ingest", str(f), "--path", str(tmp_path / "store")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "store").exists()


def test_ingest_names_the_flag_that_is_wrong(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    f = _write(tmp_path / "ing.jsonl", [{"text": "hi"}])
    assert main(["ingest", str(f), "--path", str(tmp_path / "store"), "--namespace", ""]) == 2
    assert "--namespace '': namespace must be a non-empty string" in capsys.readouterr().err  # it blamed line 1
    with pytest.raises(SystemExit) as exit_:
        main(["ingest", str(f), "--context-turns", "-1"])
    assert exit_.value.code == 2 and "--context-turns: must be an integer >= 0" in capsys.readouterr().err
    (tmp_path / "afile").write_text("not a store")
    assert main(["ingest", str(f), "--path", str(tmp_path / "afile")]) == 2
    assert "--path" in capsys.readouterr().err and (tmp_path / "afile").read_text() == "not a store"


def test_query_on_a_path_with_no_store_says_so_and_creates_none(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A mistyped --path used to create an empty store there and print nothing, exit 0."""
    assert main(["query", "badge", "--path", str(tmp_path / "typo")]) == 2
    assert "no store there" in capsys.readouterr().err and not (tmp_path / "typo").exists()


@pytest.mark.slow
def test_query_says_which_namespaces_hold_memories(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    store = str(tmp_path / "store")
    f = _write(tmp_path / "ing.jsonl", [{"text": "my badge id is E-47821", "conversation_id": "conv-1"}])
    assert main(["ingest", str(f), "--path", store]) == 0
    assert "(namespace 'conv-1')" in capsys.readouterr().out
    assert main(["query", "badge", "--path", store, "--namespace", "conv-l"]) == 2  # a typo: not an answer
    said = capsys.readouterr()
    assert "namespace 'conv-l' at " in said.err and "holds no memories; it holds 'conv-1' (--namespace)" in said.err
    assert said.out == ""
    assert main(["query", "badge", "--path", store, "--namespace", "conv-1"]) == 0
    assert main(["query", "badge", "--path", store, "--k", str(2 ** 64)]) == 2  # it ran with dense failing
    assert f"k must be at most {MAX_K}" in capsys.readouterr().err


def test_demo_checks_k_before_ingesting(capsys: pytest.CaptureFixture) -> None:
    assert main(["demo", "--k", "0"]) == 2
    captured = capsys.readouterr()
    assert "k must be a positive integer" in captured.err and "ingested" not in captured.out


def test_eval_refuses_to_write_over_its_input(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """`--json Q.jsonl` replaced the queries with the report."""
    m = _write(tmp_path / "m.jsonl", [{"id": "a", "conversation_id": "c", "text": "chess on Fridays"}])
    q = _write(tmp_path / "q.jsonl", [{"id": "q", "conversation_id": "c", "question": "chess?", "gold_ids": ["a"]}])
    before = q.read_text()
    assert main(["eval", "--memories", str(m), "--queries", str(q), "--json", str(q)]) == 2
    assert "--json" in capsys.readouterr().err and q.read_text() == before
    out = str(tmp_path / "same.png")
    assert main(["eval", "--memories", str(m), "--queries", str(q), "--json", out, "--plot", out]) == 2


def test_an_interrupt_is_one_line_not_a_traceback(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture) -> None:
    def interrupted(args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "cmd_demo", interrupted)
    assert main(["demo"]) == 130
    assert "interrupted" in capsys.readouterr().err


def test_demo_will_not_write_into_a_directory_that_holds_something(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture) -> None:
    """`demo --path` on a real store added the fifty sample memories to it without a word."""
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "keep.txt").write_text("a user's data")
    assert main(["demo", "--path", str(tmp_path / "store")]) == 2
    assert "not a new or empty directory" in capsys.readouterr().err
    assert [p.name for p in (tmp_path / "store").iterdir()] == ["keep.txt"]


@pytest.mark.slow
def test_ingest_draws_no_progress_bar_into_a_pipe_or_log(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Piped, the bar's redraws were lines of their own, the 100% one twice; the summary line says it all."""
    f = _write(tmp_path / "ing.jsonl", [{"text": f"note {i} on build {i * 7}"} for i in range(210)])
    assert main(["ingest", str(f), "--path", str(tmp_path / "store")]) == 0
    out, err = capsys.readouterr()
    assert "ingested 210 memories" in out and "ingest:" not in err and "%|" not in err


def test_eval_flags_set_the_stage_after_fusion() -> None:
    from fused_memory.cli.evaluation import _fusion_config

    parse = cli.build_parser().parse_args
    base = ["eval", "--memories", "m.jsonl", "--queries", "q.jsonl"]
    cfg = _fusion_config(parse([*base, "--recency-weight", "0.5", "--current-state-recency", "4", "--half-life-days",
                                "90", "--duplicate-cosine", "-1", "--mmr", "0.78", "--no-supersede"]))
    assert (cfg.recency_weight, cfg.current_state_recency, cfg.recency_half_life_days) == (0.5, 4.0, 90.0)
    assert (cfg.duplicate_cosine, cfg.mmr_lambda, cfg.supersede, cfg.collapse) == (None, 0.78, False, True)
    off = _fusion_config(parse([*base, "--no-after"]))
    assert (off.recency_weight, off.current_state_recency, off.supersede, off.collapse, off.mmr_lambda) == (
        0.0, 0.0, False, False, None)
    assert _fusion_config(parse([*base, "--no-collapse"])).collapse is False


def test_help_shows_each_default_once_and_never_none(capsys: pytest.CaptureFixture) -> None:
    """`query --help` printed `(default: now) (default: None)`, `mcp --help` `(default: 'default')
    (default: None)`."""
    for command in ("query", "ingest", "demo", "eval", "mcp"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        shown = " ".join(capsys.readouterr().out.split())
        assert "(default: None)" not in shown and not re.search(r"\(default: [^)]*\) \(default:", shown), shown
    with pytest.raises(SystemExit):
        main(["query", "--help"])
    assert " ".join(capsys.readouterr().out.split()).count("(default: now)") == 1


NAIVE = "2024-03-01T09:00:00"


@pytest.mark.parametrize("argv", [["query", "badge", "--now", NAIVE], ["ingest", "FILE"]])
def test_a_time_without_a_zone_is_refused_with_the_fix_unless_assume_utc(
        tmp_path: Path, capsys: pytest.CaptureFixture, argv: list[str]) -> None:
    """`ingest` and `--now` read a naive time as UTC where the library and the MCP server refuse it:
    one rule now, with an explicit way out. Nothing is created by the refused call."""
    f = _write(tmp_path / "ing.jsonl", [{"text": "ok", "event_at": "2024-03-01T09:00:00Z"},
                                        {"text": "lunch with Tom", "event_at": NAIVE}])
    store = tmp_path / "store"
    if argv[0] == "query":
        assert main(["ingest", str(f), "--path", str(store), "--assume-utc"]) == 0
        capsys.readouterr()
    args = [str(f) if a == "FILE" else a for a in argv] + ["--path", str(store)]
    assert main(args) == 2
    err = capsys.readouterr().err
    where = "--now" if argv[0] == "query" else "ing.jsonl:2: event_at"
    assert f"{where} '{NAIVE}' has no time zone; write it with one, e.g. {NAIVE}+00:00 for UTC, or pass " \
           "--assume-utc" in err, err
    if argv[0] == "ingest":
        assert not store.exists()


@pytest.mark.slow
def test_assume_utc_reads_a_naive_time_as_utc(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    f = _write(tmp_path / "ing.jsonl", [{"text": "lunch with Tom", "id": "l", "event_at": NAIVE}])
    store = str(tmp_path / "store")
    assert main(["ingest", str(f), "--path", store, "--assume-utc"]) == 0
    capsys.readouterr()
    assert main(["query", "lunch with Tom", "--path", store, "--json", "--now", "2024-03-02T09:00:00",
                 "--assume-utc"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["hits"][0]["memory"]["event_at"] == "2024-03-01T09:00:00+00:00"
