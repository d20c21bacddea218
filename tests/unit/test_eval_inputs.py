"""What `fused-memory eval` and `bench` refuse before spending minutes: every case is bad input a
user could hand them, and each must end in one clear error naming where, never in a traceback, a
table of made-up zeros, or results lost after the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fused_memory.cli import main
from fused_memory.cli.evaluation import parse_weights
from fused_memory.config import FusionConfig
from fused_memory.errors import ConfigurationError, FusedMemoryError
from fused_memory.evaluation.bench import run_bench
from fused_memory.evaluation.data import EvalDataError, load_dataset, read_jsonl
from fused_memory.evaluation.report import check_output
from fused_memory.evaluation.runner import run_eval

MEM = {"id": "a1", "conversation_id": "c1", "text": "I play chess on Fridays", "event_at": "2024-01-01T10:00:00"}
QRY = {"id": "q1", "conversation_id": "c1", "question": "when do I play chess?", "category": "temporal",
       "gold_ids": ["a1"]}


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


# (memory rows, query rows, what the error must say)
BAD_DATASETS = [
    ([{**MEM, "event_at": "0001-01-01T00:00:00+01:00"}], [QRY], "m.jsonl:1: Memory.event_at"),
    ([{**MEM, "event_at": "9999-12-31T23:59:59-01:00"}], [QRY], "range a store can hold"),
    ([{**MEM, "text": "x\u0000y"}], [QRY], "m.jsonl:1: memory text contains a NUL"),
    ([{**MEM, "text": "dog \udc00"}], [QRY], "m.jsonl:1: memory text is not valid Unicode"),
    ([{**MEM, "text": "a" * 100_001}], [QRY], "m.jsonl:1: memory text is 100001 characters"),
    ([{**MEM, "id": "i" * 20_000}], [QRY], "m.jsonl:1: memory id is longer than"),
    ([{**MEM, "conversation_id": "c" * 20_000}], [QRY], "m.jsonl:1: namespace is longer than"),
    ([{**MEM, "speaker": "\ud800"}], [QRY], "m.jsonl:1: metadata.speaker is not valid Unicode"),
    ([MEM], [], "q.jsonl: no query has gold_ids"),
    ([MEM], [{**QRY, "gold_ids": None}], "q.jsonl: no query has gold_ids"),
    ([MEM], [{**QRY, "gold_ids": [True]}], "q.jsonl:1: 'gold_ids' must be a list of ids"),
    ([MEM], [QRY, QRY], "q.jsonl:2: duplicate query id 'q1' in conversation 'c1'"),
    ([MEM], [{**QRY, "category": "Overall"}], "q.jsonl:1: category 'Overall' is reserved"),
    ([MEM], [{**QRY, "category": {"a": 1}}], "q.jsonl:1: 'category' must be a string"),
]


@pytest.mark.parametrize(("memories", "queries", "message"), BAD_DATASETS)
def test_bad_dataset_is_refused_at_load_with_file_and_line(tmp_path: Path, memories: list, queries: list,
                                                          message: str) -> None:
    m, q = _write(tmp_path / "m.jsonl", memories), _write(tmp_path / "q.jsonl", queries)
    with pytest.raises(EvalDataError) as err:
        load_dataset(m, q)
    assert message in str(err.value)


def test_gold_that_points_nowhere_is_scored_as_given_and_said(tmp_path: Path) -> None:
    """Converters differ on dropping evidence that names no turn; the eval scores what it is given
    (as qrels are: a miss for every system) and says so instead of refusing the dataset."""
    mems = [MEM, {**MEM, "id": "b1", "conversation_id": "c2"}]
    qs = [QRY, {**QRY, "id": "q2", "gold_ids": ["a1", "nope"]}, {**QRY, "id": "q3", "gold_ids": ["b1"]},
          {**QRY, "id": "q4", "conversation_id": "zz"}]
    ds = load_dataset(_write(tmp_path / "m.jsonl", mems), _write(tmp_path / "q.jsonl", qs))
    assert [q.gold_ids for q in ds.queries] == [("a1",), ("a1", "nope"), ("b1",), ("a1",)]  # unchanged
    assert len(ds.warnings) == 2
    assert "1 scored queries ask about a conversation with no memories" in ds.warnings[0] and "q4" in ds.warnings[0]
    assert "2 gold ids of 2 queries are not memories of their conversation" in ds.warnings[1]
    assert "q2: ['nope']" in ds.warnings[1] and "q3: ['b1']" in ds.warnings[1]


def test_a_good_dataset_loads(tmp_path: Path) -> None:
    """A query without gold loads (and is not scored), even about a conversation with no memories."""
    unscored = [{**QRY, "id": "q2", "gold_ids": []}, {**QRY, "id": "q3", "conversation_id": "zz", "gold_ids": []}]
    ds = load_dataset(_write(tmp_path / "m.jsonl", [MEM]), _write(tmp_path / "q.jsonl", [QRY, *unscored]))
    assert [q.id for q in ds.queries] == ["q1", "q2", "q3"] and ds.warnings == ()


def test_jsonl_names_the_line_that_is_not_utf8_and_skips_a_byte_order_mark(tmp_path: Path) -> None:
    p = tmp_path / "m.jsonl"
    p.write_bytes(b'\xef\xbb\xbf{"a": 1}\n\n{"b": "caf\xc3\xa9"}\n{"c": "caf\xe9"}\n')
    rows = read_jsonl(p)
    assert next(rows) == (1, {"a": 1})
    assert next(rows) == (3, {"b": "café"})
    with pytest.raises(EvalDataError, match=r"m.jsonl:4: not valid UTF-8 \(byte 11 of the line\)"):
        next(rows)


@pytest.mark.parametrize("question", ["dog \udc00?", "q" * 10_001])
def test_a_question_no_system_can_be_asked_is_an_error_before_the_ingest(tmp_path: Path, question: str) -> None:
    """Not a miss of every system (recall 0, exit 0): an error before the ingest."""
    ds = load_dataset(_write(tmp_path / "m.jsonl", [MEM]),
                      _write(tmp_path / "q.jsonl", [{**QRY, "question": question}]))
    with pytest.raises(EvalDataError, match="query 'q1' of conversation 'c1'"):
        run_eval(ds, path=str(tmp_path / "store"))
    assert not any((tmp_path / "store").glob("**/*.json"))  # nothing was ingested


@pytest.mark.parametrize(("target", "plot", "message"), [
    (".", False, "is a directory"),
    ("newdir/", False, "is a directory"),  # not a file named "newdir"
    ("/proc/fused-memory-test.json", False, "cannot write there"),
    ("afile/out.json", False, "afile is a file, not a directory"),
    ("out.xyz", True, "matplotlib cannot save '.xyz'"),
    ("-", True, "a plot is an image file"),  # not a file named "-"
])
def test_an_output_that_cannot_be_written_is_refused_before_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    target: str, plot: bool, message: str) -> None:
    monkeypatch.chdir(tmp_path)  # the plot case needs matplotlib: the [all] extra .ci/run installs
    (tmp_path / "afile").write_text("a file, not a directory")
    with pytest.raises(ConfigurationError, match=message):
        check_output(target, "--plot" if plot else "--json", plot=plot)


def test_a_writable_output_passes_and_leaves_nothing_behind(tmp_path: Path) -> None:
    """Missing folders are made when the results are written, not by the check: a run that then
    fails leaves none behind."""
    check_output(str(tmp_path / "new" / "dir" / "out.json"), "--json")
    check_output("-", "--json")
    assert list(tmp_path.iterdir()) == []


def test_eval_refuses_a_store_directory_that_is_not_empty(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Memories of an earlier run would be found again and change the scores."""
    m, q = _write(tmp_path / "m.jsonl", [MEM]), _write(tmp_path / "q.jsonl", [QRY])
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "meta.json").write_text("{}")
    assert main(["eval", "--memories", str(m), "--queries", str(q), "--store", str(tmp_path / "old")]) == 2
    assert "--store" in capsys.readouterr().err and (tmp_path / "old" / "meta.json").read_text() == "{}"


def test_weights_must_be_finite_and_arm_names_read_as_arms_does() -> None:
    with pytest.raises(ConfigurationError, match="finite"):
        FusionConfig(weights={"dense": float("inf")})
    assert FusionConfig(timeouts_s={"dense": float("inf")}).timeouts_s["dense"] == float("inf")  # "wait"
    assert parse_weights(["DENSE=1.2", " Graph =0.5"]) == {"dense": 1.2, "graph": 0.5}


@pytest.mark.parametrize("kw", [{"n_queries": 0}, {"n_simple": -1}, {"sizes": [0]}])
def test_bench_refuses_counts_it_cannot_take_a_percentile_of(kw: dict) -> None:
    sizes = kw.pop("sizes", [10])
    with pytest.raises(ConfigurationError, match="must be a positive integer"):
        run_bench(sizes, **kw)


@pytest.mark.parametrize(("argv", "message"), [
    (["query", "hi", "--now", "tomorrow"], "--now must be an ISO 8601 time with a zone, e.g. "
                                           "2024-03-01T09:00:00+01:00; got 'tomorrow'"),
    (["ingest", "{file}"], "ing.jsonl:2: event_at must be an ISO 8601 time with a zone, e.g. "
                           "2024-03-01T09:00:00+01:00; got 'yesterday'"),
])
def test_ingest_and_query_name_a_bad_time(tmp_path: Path, capsys: pytest.CaptureFixture, argv: list[str],
                                          message: str) -> None:
    f = _write(tmp_path / "ing.jsonl",
               [{"id": "a", "text": "fine"}, {"id": "b", "text": "hi", "event_at": "yesterday"}])
    argv = [a.replace("{file}", str(f)) for a in argv] + ["--path", str(tmp_path / "store")]
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "store").exists()  # refused before any store was created


def test_errors_are_library_errors() -> None:
    """The CLI turns FusedMemoryError into one line and exit 2; anything else would be a traceback."""
    assert issubclass(EvalDataError, FusedMemoryError) and issubclass(ConfigurationError, FusedMemoryError)


def test_the_cli_shows_control_characters_in_memories_instead_of_obeying_them(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    store = str(tmp_path / "store")
    f = _write(tmp_path / "ing.jsonl", [{"id": "a", "text": "chess club \x1b[2J\x1b]0;pwned\x07 on Fridays"}])
    assert main(["ingest", str(f), "--path", store]) == 0
    for extra in ([], ["--explain"]):
        assert main(["query", "chess club", "--path", store, *extra]) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\x07" not in out
        assert "chess club \\x1b[2J\\x1b]0;pwned\\x07 on Fridays" in out


def test_a_closed_evaluator_raises_instead_of_scoring_zeros(tmp_path: Path) -> None:
    """Each query's FusedMemoryError counts as a miss; a closed store must not (it would give
    every system recall 0 with exit 0)."""
    from fused_memory.errors import StoreClosed
    from fused_memory.evaluation.runner import Evaluator, default_systems

    ds = load_dataset(_write(tmp_path / "m.jsonl", [MEM]), _write(tmp_path / "q.jsonl", [QRY]))
    systems = default_systems(["dense", "lexical"], ablations=False)
    ev = Evaluator(ds, path=str(tmp_path / "store"))
    assert ev.evaluate(systems).overall["fused"]["recall@5"] == 1.0
    ev.close()
    with pytest.raises(StoreClosed):
        ev.evaluate(systems)


def test_eval_progress_shows_control_characters_in_conversation_ids(capsys: pytest.CaptureFixture) -> None:
    from fused_memory.evaluation.runner import stderr_progress

    stderr_progress("ingested conv-\x1b[2J\x07: 3 memories")
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and "conv-\\x1b[2J\\x07" in err


def test_a_misspelled_arm_in_the_config_fails_before_the_ingest(tmp_path: Path) -> None:
    """FusionConfig takes custom arm names, so the check is where the arms are known, before the
    evaluator ingests any conversation."""
    from fused_memory.evaluation.runner import Evaluator, default_systems

    ds = load_dataset(_write(tmp_path / "m.jsonl", [MEM]), _write(tmp_path / "q.jsonl", [QRY]))
    ev = Evaluator(ds, path=str(tmp_path / "store"))
    with pytest.raises(ConfigurationError, match="lexcial"):
        ev.evaluate(default_systems(["dense"], ablations=False), FusionConfig(weights={"lexcial": 2.0}))
    assert not (tmp_path / "store").exists()  # nothing ingested
    ev.close()


@pytest.mark.parametrize(("backend", "lexical"), [("qdrant-local", None), ("embedded", "engine"), ("embedded", None)])
def test_eval_scores_either_lexical_index_on_either_backend(tmp_path: Path, backend: str, lexical: str | None) -> None:
    """`fused-memory eval --backend qdrant-local --lexical engine|bm25`: the server backend's code and
    either index score the same dataset, and the report says which ran (the hashing embedder stands
    in for MiniLM: the lexical arm reads no embedding)."""
    from fused_memory.embeddings import HashingEmbedder
    from fused_memory.evaluation.runner import Evaluator, System

    rows = [MEM, {**MEM, "id": "a2", "text": "my badge number is E-47821"}]
    ds = load_dataset(_write(tmp_path / "m.jsonl", rows),
                      _write(tmp_path / "q.jsonl", [{**QRY, "question": "badge E-47821", "gold_ids": ["a2"]}]))
    with Evaluator(ds, embedder=HashingEmbedder(dim=16), backend=backend, lexical=lexical) as ev:
        report = ev.evaluate([System("lexical", ("lexical",), False, "arm")])
    assert report.overall["lexical"]["recall@5"] == 1.0
    want = lexical or ("engine" if backend == "qdrant-local" else "bm25")
    assert (report.config["backend"], report.config["lexical"]) == (backend, want)


def test_eval_refuses_an_unknown_backend_before_any_io(tmp_path: Path) -> None:
    from fused_memory.evaluation.runner import Evaluator

    ds = load_dataset(_write(tmp_path / "m.jsonl", [MEM]), _write(tmp_path / "q.jsonl", [QRY]))
    with pytest.raises(FusedMemoryError, match="backend must be one of embedded, qdrant-local"):
        Evaluator(ds, path=str(tmp_path / "store"), backend="qdrant")
    with pytest.raises(ConfigurationError, match="lexical must be one of"):
        Evaluator(ds, path=str(tmp_path / "store2"), lexical="sparse")
    assert not (tmp_path / "store").exists()
