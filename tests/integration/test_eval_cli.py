"""`fused-memory eval ... --json` and `fused-memory bench --n 1000 --json` as a user runs them (the
installed console script, real default embedder), on small inputs made here; checks the JSON shapes
docs/eval_locomo.json and docs/bench.json have, and that --plot writes a PNG or says clearly what is
missing."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import fused_memory_cli

from fused_memory.errors import MissingDependency
from fused_memory.evaluation.significance import MIN_N
from fused_memory.results import ARMS

pytestmark = pytest.mark.slow

METRICS = {"recall@5", "recall@10", "ndcg@10"}

MEMORIES = [
    # conversation A: times without a zone (read as UTC), extra fields that must be ignored
    ("a:1", "conv-a", "conv-a:S1", "Alice", "Alice: My employee badge ID is E-47821.", "2024-03-01T10:00:00"),
    ("a:2", "conv-a", "conv-a:S1", "Bob", "Bob: I adopted a retriever puppy named Biscuit.", "2024-03-01T10:01:00"),
    ("a:3", "conv-a", "conv-a:S1", "Alice", "Alice: I prefer dark mode in every editor.", "2024-03-01T10:02:00"),
    ("a:4", "conv-a", "conv-a:S2", "Bob", "Bob: Yesterday I ran the Berlin marathon.", "2024-04-10T09:00:00"),
    ("a:5", "conv-a", "conv-a:S2", "Alice", "Alice: The budget review moved to Thursday.", "2024-04-10T09:05:00"),
    ("a:6", "conv-a", "conv-a:S2", "Bob", "Bob: My sister Clara works as a nurse in Lisbon.", "2024-04-10T09:06:00"),
    # conversation B reuses words of A: answers must stay in their own namespace
    ("b:1", "conv-b", "conv-b:S1", "Dana", "Dana: My badge ID is E-11111, not the old one.", "2024-05-02T15:00:00"),
    ("b:2", "conv-b", "conv-b:S1", "Eli", "Eli: I started learning the cello last month.", "2024-05-02T15:01:00"),
    ("b:3", "conv-b", "conv-b:S1", "Dana", "Dana: We booked a cabin by the lake for August.", "2024-05-02T15:02:00"),
    ("b:4", "conv-b", "conv-b:S2", "Eli", "Eli: My favourite food is spicy ramen.", "2024-06-01T18:00:00"),
]

QUERIES = [
    ("qa1", "conv-a", "What is Alice's badge ID?", "single-hop", ["a:1"], "2024-04-20T12:00:00"),
    ("qa2", "conv-a", "What is the name of Bob's dog?", "single-hop", ["a:2"], "2024-04-20T12:00:00"),
    ("qa3", "conv-a", "When did Bob run the Berlin marathon?", "temporal", ["a:4"], "2024-04-20T12:00:00"),
    ("qa4", "conv-a", "Where does Bob's sister work and what is her job?", "multi-hop", ["a:6"], "2024-04-20T12:00:00"),
    ("qa5", "conv-a", "Which display theme does Alice like?", "single-hop", ["a:3"], "2024-04-20T12:00:00"),
    ("qa6", "conv-a", "Question without evidence", "open-domain", [], "2024-04-20T12:00:00"),
    ("qb1", "conv-b", "What instrument is Eli learning?", "single-hop", ["b:2"], "2024-06-10T12:00:00"),
    ("qb2", "conv-b", "What food does Eli love, and where is the cabin?", "multi-hop", ["b:4", "b:3"], None),
]


def _run(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*fused_memory_cli(), *args], capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


@pytest.fixture
def dataset(tmp_path: Path) -> tuple[Path, Path]:
    mem = tmp_path / "memories.jsonl"
    qry = tmp_path / "queries.jsonl"
    mem.write_text("\n".join(json.dumps(
        {"id": i, "conversation_id": c, "session_id": s, "speaker": sp, "text": t, "event_at": at,
         "dia_id": i.split(":")[1], "image_caption": None}) for i, c, s, sp, t, at in MEMORIES) + "\n")
    qry.write_text("\n".join(json.dumps(
        {"id": i, "conversation_id": c, "question": q, "category": cat, "gold_ids": g, "now": now,
         "answer": "ignored", "category_code": 0}) for i, c, q, cat, g, now in QUERIES) + "\n")
    return mem, qry


def _check_metric_block(block: dict, where: str) -> None:
    assert set(block) == METRICS, where
    for name, value in block.items():
        assert isinstance(value, float) and 0.0 <= value <= 1.0, (where, name, value)


def test_eval_json_shape(dataset: tuple[Path, Path], tmp_path: Path) -> None:
    mem, qry = dataset
    out = tmp_path / "eval.json"
    proc = _run("eval", "--memories", str(mem), "--queries", str(qry), "--k", "5,10", "--arms", "all",
                "--pool-min", "7", "--json", str(out))
    assert "recall@5" in proc.stdout and "fused" in proc.stdout  # the human table too
    report = json.loads(out.read_text())
    assert {"overall", "by_category", "n_queries", "config"} <= set(report)
    systems = {"fused", "fused_rrf", *ARMS, *(f"fused_without_{a}" for a in ARMS), "fused_optimizer_off"}
    assert set(report["overall"]) == systems
    for system, block in report["overall"].items():
        _check_metric_block(block, f"overall/{system}")
    # the query without gold is excluded; categories are the ones that have scored queries
    assert report["n_queries"] == 7
    assert set(report["by_category"]) == {"single-hop", "temporal", "multi-hop"}
    assert report["n_by_category"] == {"single-hop": 4, "temporal": 1, "multi-hop": 2}
    for cat, by_system in report["by_category"].items():
        assert set(by_system) == systems
        for system, block in by_system.items():
            _check_metric_block(block, f"{cat}/{system}")
    assert isinstance(report["config"], dict) and report["config"]["ks"] == [5, 10]
    assert report["config"]["excluded_no_gold"] == 1
    assert report["config"]["fusion"]["pool_min"] == 7  # the flag reached the ensemble's config
    assert report["config"]["embedder_activations"] == "int8"  # the default embedder on int8 kernels
    # ten memories, k = 10: every system that answers at all recalls nearly everything at 10, and
    # the ensemble ranks these distinct facts well at 5 (a gross regression check, not a benchmark)
    assert report["overall"]["fused"]["recall@5"] >= 0.6
    assert report["overall"]["fused"]["recall@10"] >= report["overall"]["fused"]["recall@5"]
    # fused minus the best single arm per category, paired with its bootstrap interval
    assert "95% paired bootstrap interval" in proc.stdout
    margins = report["fused_minus_best_arm"]
    assert list(margins) == [*report["by_category"], "overall"]
    for cat, m in margins.items():
        block = report["overall"] if cat == "overall" else report["by_category"][cat]
        assert m["metric"] == "recall@5" and m["best_arm"] in ARMS
        assert block[m["best_arm"]]["recall@5"] == max(block[a]["recall@5"] for a in ARMS)
        assert m["fused_minus_best"] == pytest.approx(block["fused"]["recall@5"] - block[m["best_arm"]]["recall@5"],
                                                      abs=2e-4)
        if m["n"] >= MIN_N:
            assert m["ci95"][0] <= m["fused_minus_best"] <= m["ci95"][1]
        else:  # this small set: no slice has enough questions for an interval, and none is made up
            assert m["ci95"] is None
        assert m["n"] == (report["n_queries"] if cat == "overall" else report["n_by_category"][cat])


def test_eval_subset_of_arms_and_stdout_json(dataset: tuple[Path, Path]) -> None:
    mem, qry = dataset
    proc = _run("eval", "--memories", str(mem), "--queries", str(qry), "--k", "3", "--arms", "dense,lexical",
                "--no-ablations", "--json", "-", "--quiet")
    report = json.loads(proc.stdout)  # nothing but the JSON on stdout
    assert set(report["overall"]) == {"fused", "fused_rrf", "dense", "lexical"}
    assert set(report["overall"]["fused"]) == {"recall@3", "ndcg@10"}


def test_eval_bad_input_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "m.jsonl"
    bad.write_text('{"id": "x", "conversation_id": "c"}\n')
    proc = subprocess.run([*fused_memory_cli(), "eval", "--memories", str(bad), "--queries", str(bad)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "m.jsonl:1: missing 'text'" in proc.stderr


def test_bench_json_shape(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    _run("bench", "--n", "1000", "--json", str(out), "--queries", "25", "--simple-queries", "10")
    results = json.loads(out.read_text())
    assert list(results) == ["1000"]
    r = results["1000"]
    for key in ("ingest_per_s", "rss_mb", "fanout_over_slowest", "fanout_over_sum", "optimizer_p99_ratio",
                "lexical_vs_rank_bm25", "fanout_cpu_floor", "ensemble_cpu_p50_ms"):
        assert isinstance(r[key], (int, float)) and r[key] > 0, key
    for key in ("p50_ms", "p99_ms"):
        assert "ensemble" in r[key] and set(r[key]) - {"ensemble"} <= set(ARMS)
        assert {"dense", "lexical"} <= set(r[key])
        assert all(v > 0 for v in r[key].values())
        assert r["p99_ms"]["ensemble"] >= r["p50_ms"]["ensemble"]
    assert r["embedder_activations"] == "int8"
    # how often an arm was read off dense's results instead of searching (`Retrieval.pooled`)
    assert set(r["arm_pooled"]) <= {"type", "temporal", "graph"}
    assert all(0 < n <= r["arm_runs"][arm] for arm, n in r["arm_pooled"].items())
    # the fan-out ratio per query plan: every timed query in exactly one plan, labelled by its arms
    plans = r["fanout_by_plan"]
    assert sum(p["queries"] for p in plans.values()) == r["n_queries"]
    assert all(label.split(",")[0].split("+")[0] in ARMS and p["fanout_over_slowest"] > 0
               for label, p in plans.items())
    # the two ratio targets carry their 95% bootstrap interval, around the value reported
    for key in ("fanout_over_slowest", "optimizer_p99_ratio"):
        lo, hi = r[key + "_ci95"]
        assert 0 < lo <= r[key] <= hi, key
    # optimizer on / off over the simple mix, per shape (a time, an identifier or a name alone), and
    # on plain topical queries: p50 and p99 each way, and the share answered in the top 10 each way
    opt = r["optimizer"]
    assert set(opt["shapes"]) == {"time", "identifier_only", "name"}
    assert opt["mix"]["n"] == 10 and sum(s["n"] for s in opt["shapes"].values()) == 10 and opt["topical"]["n"] == 10
    for row in (opt["mix"], *opt["shapes"].values(), opt["topical"]):
        assert all(row[k] > 0 for k in ("on_p50_ms", "on_p99_ms", "off_p50_ms", "off_p99_ms", "p99_ratio"))
        assert all(0 <= row[k] <= 1 for k in ("top10_on", "top10_off") if row[k] is not None)
    assert r["optimizer_p99_ratio"] == opt["mix"]["p99_ratio"]
    assert r["optimizer_topical_p99_ratio"] == opt["topical"]["p99_ratio"]
    # the time, identifier and name shapes need no query embedding: the optimizer skipped it for them
    assert opt["shapes"]["identifier_only"]["embedded_on"] == 0 and opt["shapes"]["time"]["embedded_on"] <= 1
    # ensemble against dense alone on the same queries, and on those it embedded for
    assert r["vs_dense"]["p50_ratio"] > 0 and 0 < r["vs_dense"]["embedding_plans"]["n"] < r["n_queries"]


def test_bench_keeps_its_store_and_reuses_it_without_ingesting(tmp_path: Path) -> None:
    """`bench --store DIR`: the first run ingests and keeps the store, the next one queries it
    without ingesting again; a kept store holding other memories is refused, not added to."""
    args = ("bench", "--n", "300", "--queries", "8", "--simple-queries", "4", "--store", str(tmp_path / "kept"))
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    _run(*args, "--json", str(first))
    _run(*args, "--json", str(second))
    a, b = json.loads(first.read_text())["300"], json.loads(second.read_text())["300"]
    assert a["ingest_reused"] is False and a["ingest_per_s"] > 0
    assert b["ingest_reused"] is True and b["ingest_per_s"] is None and b["ingest_overhead"] is None
    assert b["p50_ms"]["ensemble"] > 0 and b["n_queries"] == a["n_queries"] == 8
    shutil.copytree(tmp_path / "kept" / "n300-seed7-bm25", tmp_path / "kept" / "n400-seed7-bm25")
    proc = subprocess.run([*fused_memory_cli(), "bench", "--n", "400", "--queries", "8", "--simple-queries", "4",
                           "--store", str(tmp_path / "kept")], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2 and "holds {'bench': 300}, not 400 bench memories" in proc.stderr


def test_plot_writes_png_or_says_what_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fused_memory.evaluation import report as rep

    results = {"1000": {"p50_ms": {"ensemble": 3.0, "dense": 2.0}, "p99_ms": {"ensemble": 9.0, "dense": 5.0}},
               "10000": {"p50_ms": {"ensemble": 4.0, "dense": 2.5}, "p99_ms": {"ensemble": 12.0, "dense": 6.0}}}
    png = tmp_path / "latency.png"  # the test install has the plot extra (.[all,test]): no silent skip
    rep.plot_bench(results, str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the extra were not installed
    with pytest.raises(MissingDependency, match=r"fused-memory\[plot\]"):
        rep.plot_bench(results, str(tmp_path / "never.png"))
