"""`fused-memory eval` and `fused-memory bench`, plugged into the main CLI by `add_commands`.

This module imports only argparse at load time: `fused_memory.cli.build_parser` imports it for
every command (even `demo`), so the store, the models and matplotlib load only when a command runs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from ..conversation import DEFAULT_CONTEXT_TURNS
from ..errors import ConfigurationError
from ..results import ARMS
from ..terminal import terminal_safe

__all__ = ["add_commands", "cmd_eval", "cmd_bench", "cmd_train_ranker", "parse_int_list", "parse_arms", "parse_weights"]


def parse_int_list(text: str, what: str) -> tuple[int, ...]:
    """ "5,10" -> (5, 10); every value a positive integer, order kept, duplicates dropped."""
    try:
        values = tuple(dict.fromkeys(int(v) for v in text.split(",") if v.strip()))
    except ValueError:
        raise ConfigurationError(f"{what} must be comma-separated integers, got {text!r}") from None
    if not values or any(v <= 0 for v in values):
        raise ConfigurationError(f"{what} must be positive integers, got {text!r}")
    return values


def parse_arms(text: str) -> tuple[str, ...]:
    """ "all" or a comma list of arm names."""
    if text.strip().lower() == "all":
        return ARMS
    arms = tuple(a.strip().lower() for a in text.split(",") if a.strip())
    unknown = [a for a in arms if a not in ARMS]
    if unknown or not arms:
        raise ConfigurationError(f"unknown arm(s) {unknown or text!r}; choose 'all' or from {', '.join(ARMS)}")
    return arms


def parse_weights(items: list[str] | None) -> dict[str, float]:
    """ ["dense=1.2", "graph=0.8"] -> {"dense": 1.2, "graph": 0.8}."""
    out: dict[str, float] = {}
    for item in items or []:
        arm, sep, value = item.partition("=")
        arm = arm.strip().lower()  # as --arms reads them
        if not sep or arm not in ARMS:
            raise ConfigurationError(f"--weight takes ARM=W with ARM in {', '.join(ARMS)}, got {item!r}")
        try:
            out[arm] = float(value)
        except ValueError:
            raise ConfigurationError(f"--weight {item!r}: {value!r} is not a number") from None
    return out


def _fusion_config(args: argparse.Namespace) -> Any:
    from ..config import FusionConfig

    base = FusionConfig.from_env()
    changes: dict[str, Any] = {}
    if args.rrf_k is not None:
        changes["k"] = args.rrf_k
    if args.depth is not None:
        changes["depth"] = args.depth
    if args.widen_below is not None:
        changes["widen_below"] = args.widen_below
    if args.pool_min is not None:
        changes["pool_min"] = args.pool_min
    weights = parse_weights(args.weight)
    if weights:
        changes["weights"] = {**base.weights, **weights}
    for flag, name in (("recency_weight", "recency_weight"), ("current_state_recency", "current_state_recency"),
                       ("half_life_days", "recency_half_life_days"), ("mmr", "mmr_lambda")):
        if getattr(args, flag) is not None:
            changes[name] = getattr(args, flag)
    if args.duplicate_cosine is not None:
        changes["duplicate_cosine"] = None if args.duplicate_cosine < 0 else args.duplicate_cosine
    if args.no_collapse:
        changes["collapse"] = False
    if args.no_supersede:
        changes["supersede"] = False
    if args.no_after:  # every step of the stage after fusion off: the fused top k as it was
        changes.update(recency_weight=0.0, current_state_recency=0.0, supersede=False, collapse=False, mmr_lambda=None)
    return base.with_(**changes) if changes else base


def cmd_eval(args: argparse.Namespace) -> int:
    """Ingest, answer, score, print; optionally write JSON and a plot."""
    from ..evaluation.data import load_dataset
    from ..evaluation.report import format_eval, plot_eval
    from ..evaluation.runner import default_systems, run_eval, stderr_progress

    ks = parse_int_list(args.k, "--k")
    arms = parse_arms(args.arms)
    inputs = _inputs(args)
    _check_outputs(args, inputs=inputs)
    config = _fusion_config(args)
    if args.store is not None:
        from .paths import require_fresh_dir

        require_fresh_dir(args.store, "--store", "eval ingests into a fresh store (memories of an earlier run "
                                                 "would be found again and change the scores)")
    if args.locomo:
        from ..evaluation.locomo import load_locomo

        wanted = [c.strip() for c in args.conversations.split(",") if c.strip()] if args.conversations else None
        dataset = load_locomo(args.locomo, wanted)
    else:
        dataset = load_dataset(args.memories, args.queries)
    for warning in dataset.warnings:  # not progress: shown with --quiet too
        print(terminal_safe(f"fused-memory: warning: {warning}"), file=sys.stderr)
    systems = default_systems(arms, ablations=not args.no_ablations)
    report = run_eval(dataset, systems=systems, config=config, ks=ks, ndcg_ks=(10,), path=args.store,
                      progress=_progress(args, stderr_progress), context_turns=args.context_turns,
                      backend=args.backend, lexical=args.lexical)
    data = report.to_json()
    for flag, given in inputs.items():
        data["config"][flag.lstrip("-")] = str(given)
    if args.conversations:
        data["config"]["conversations"] = args.conversations
    return _emit(args, lambda: format_eval(report), data, lambda png: plot_eval(report, png))


def _inputs(args: argparse.Namespace) -> dict[str, str]:
    """The dataset's files by flag: --locomo alone, or --memories with --queries."""
    if args.locomo and (args.memories or args.queries):
        raise ConfigurationError("give --locomo (the release file) or --memories and --queries, not both")
    if args.locomo:
        return {"--locomo": args.locomo}
    if args.conversations:
        raise ConfigurationError("--conversations picks conversations of --locomo's file; give --locomo")
    if not (args.memories and args.queries):
        raise ConfigurationError("give --memories M.jsonl and --queries Q.jsonl, or --locomo locomo10.json")
    return {"--memories": args.memories, "--queries": args.queries}


def cmd_bench(args: argparse.Namespace) -> int:
    """Run every size side by side; print, optionally write JSON and a plot."""
    from ..evaluation.bench import run_bench
    from ..evaluation.report import format_bench, plot_bench
    from ..evaluation.runner import stderr_progress

    sizes = parse_int_list(args.n, "--n")
    if args.write_vectors:
        return _write_vectors(args, max(sizes))
    if args.embedder == "hashing" and args.vectors:
        raise ConfigurationError("give --embedder hashing or --vectors FILE.npy, not both")
    if args.vectors or args.embedder == "hashing":
        return _bench_scale(args, sizes)
    if args.ner is not None or args.namespaces is not None:
        raise ConfigurationError("--ner/--no-ner and --namespaces are for the scale mode (--embedder hashing or "
                                 "--vectors FILE.npy); the default bench ingests one namespace with NER")
    _check_outputs(args)
    results = run_bench(sizes, n_queries=args.queries, n_simple=args.simple_queries, seed=args.seed,
                        progress=_progress(args, stderr_progress), lexical=args.lexical, store_dir=args.store)
    return _emit(args, lambda: format_bench(results), results, lambda png: plot_bench(results, png))


def _bench_scale(args: argparse.Namespace, sizes: tuple[int, ...]) -> int:
    """The scale mode (`evaluation.scale`): memory vectors from the hashing embedder or a file, no NER
    unless asked, open / first query / RSS / disk measured in a new process."""
    from ..evaluation.report import format_scale, plot_scale
    from ..evaluation.runner import stderr_progress
    from ..evaluation.scale import ScaleSpec, run_scale

    _check_outputs(args, inputs={"--vectors": args.vectors} if args.vectors else None)
    spec = ScaleSpec(embedder="vectors" if args.vectors else "hashing", vectors=args.vectors, ner=bool(args.ner),
                     namespaces=1 if args.namespaces is None else args.namespaces)
    results = run_scale(sizes, spec, n_queries=args.queries, seed=args.seed, lexical=args.lexical,
                        store_dir=args.store, progress=_progress(args, stderr_progress))
    return _emit(args, lambda: format_scale(results), results, lambda png: plot_scale(results, png))


def _write_vectors(args: argparse.Namespace, n: int) -> int:
    """`--write-vectors FILE.npy`: the default embedder's vectors of the seed's first n synthetic
    memories, for `--vectors` (a file for 1M serves every smaller n)."""
    from ..evaluation.runner import stderr_progress
    from ..evaluation.scale import write_synth_vectors

    if args.vectors or args.embedder == "hashing" or args.json or args.plot:
        raise ConfigurationError("--write-vectors only writes the file; run the bench with --vectors after it")
    path = write_synth_vectors(args.write_vectors, n, seed=args.seed, progress=_progress(args, stderr_progress))
    print(terminal_safe(f"fused-memory: wrote {path} ({n:,} vectors, seed {args.seed})"), file=sys.stderr)
    return 0


def cmd_train_ranker(args: argparse.Namespace) -> int:
    """Ask every labelled query once, fit the learned order on its candidates, write the ranker file."""
    import json
    import os

    from ..evaluation.candidates import capture, replay
    from ..evaluation.data import load_dataset
    from ..evaluation.learning import fit_ranker, training_rows
    from ..evaluation.runner import stderr_progress

    if args.c <= 0 or args.depth < 2:
        raise ConfigurationError(f"--c must be > 0 and --depth >= 2, got {args.c} and {args.depth}")
    for flag, path in (("--memories", args.memories), ("--queries", args.queries)):
        if os.path.realpath(path) == os.path.realpath(args.out):
            raise ConfigurationError(f"--out {args.out} is also {flag}; write the ranker somewhere else")
    try:  # fail before the long part: scikit-learn present, the output writable
        import sklearn  # noqa: F401
    except ImportError:
        raise ConfigurationError("train-ranker needs scikit-learn: pip install 'fused-memory[train]'") from None
    dataset = load_dataset(args.memories, args.queries)
    progress = _progress(args, stderr_progress)
    queries = [replay(r) for r in capture(dataset, progress=progress)]
    x, y = training_rows(queries, depth=args.depth)
    meta = {"memories": os.path.basename(args.memories), "queries": os.path.basename(args.queries),
            "n_queries": len(queries), "n_candidates": int(len(y)), "n_gold": int(y.sum()), "c": args.c,
            "depth": args.depth}
    ranker = fit_ranker(x, y, c=args.c, meta=meta)
    try:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(ranker.to_json(), fh, indent=1)
            fh.write("\n")
    except OSError as exc:
        raise ConfigurationError(f"--out {args.out}: cannot be written ({exc.strerror or exc})") from None
    print(terminal_safe(f"fused-memory: wrote {args.out} ({len(queries)} queries, {int(y.sum())} gold among "
                        f"{len(y)} candidates)"), file=sys.stderr)
    return 0


def cmd_timeline(args: argparse.Namespace) -> int:
    """Ingest one half of the personal-timeline set, ask every question, print the shares per kind."""
    from ..config import FusionConfig
    from ..evaluation.timeline import load_timeline, run_timeline

    _check_outputs(args, inputs={"--data": args.data})
    data = load_timeline(args.data)
    config = FusionConfig(order=args.order) if args.order else None

    def show(q: Any, outcome: Any, r: Any) -> None:
        if args.show_misses and not (outcome.right and outcome.stable and not outcome.false_supersession):
            print(terminal_safe(f"MISS {q.kind:<7} {q.id}: {q.text!r} expected {sorted(q.answers)}"
                                f"{'' if outcome.stable else ' (first answers change with k)'}"), file=sys.stderr)
            for h in r.hits[:3]:
                print(terminal_safe(f"    {h.memory.id:<10} {h.memory.text[:90]!r}  {h.explain()}"), file=sys.stderr)

    report = run_timeline(data, args.split, config=config, stability=not args.no_stability, show=show)
    return _emit(args, report.table, report.to_json(), lambda png: png)


def _check_outputs(args: argparse.Namespace, inputs: dict[str, str] | None = None) -> None:
    """Fail before the long part, not after it: matplotlib present, output paths writable, and no
    output written over an input or over the other output (`--json Q.jsonl` replaced the queries)."""
    import os

    from ..evaluation.report import check_output, require_matplotlib

    if args.plot:
        require_matplotlib()
    check_output(args.json, "--json")
    check_output(args.plot, "--plot", plot=True)
    seen: dict[str, str] = {os.path.realpath(p): flag for flag, p in (inputs or {}).items()}
    for flag, target in (("--json", args.json), ("--plot", args.plot)):
        if target and target != "-":
            real = os.path.realpath(target)
            if real in seen:
                raise ConfigurationError(f"{flag} {target} is also {seen[real]}; write the output somewhere else")
            seen[real] = flag


def _progress(args: argparse.Namespace, to_stderr: Callable[[str], None]) -> Callable[[str], None]:
    return (lambda _m: None) if args.quiet else to_stderr


def _emit(args: argparse.Namespace, table: Callable[[], str], data: Any, plot: Callable[[str], str]) -> int:
    """The table on stdout (unless the JSON goes there), then `--json` and `--plot` if asked."""
    from ..evaluation.report import write_json

    if args.json != "-":
        print(table())
    if args.json:
        write_json(data, args.json)
        if args.json != "-":
            print(terminal_safe(f"fused-memory: wrote {args.json}"), file=sys.stderr)
    if args.plot:
        print(terminal_safe(f"fused-memory: wrote {plot(args.plot)}"), file=sys.stderr)
    return 0


def add_commands(subparsers: Any) -> None:
    """Add `eval`, `bench`, `train-ranker` and `timeline` to the `fused-memory` subcommands."""
    e = subparsers.add_parser(
        "eval", help="Recall@k / NDCG@10 of the ensemble, each arm and ablations on a JSONL dataset",
        description="Ingest each conversation of M.jsonl into its own namespace of a fresh embedded store "
                    "(default embedder), answer every query of Q.jsonl at its 'now', and report Recall@k "
                    "and NDCG@10 of gold_ids per category and overall, for the fused ensemble, each arm "
                    "alone, the ensemble without each arm, and the optimizer off.")
    e.add_argument("--memories", metavar="M.jsonl")
    e.add_argument("--queries", metavar="Q.jsonl")
    e.add_argument("--locomo", metavar="locomo10.json", help="the public LoCoMo release file as it is, instead of "
                                                             "--memories and --queries")
    e.add_argument("--conversations", metavar="IDS", help="with --locomo: only these conversations, comma-separated "
                                                          "sample ids (e.g. conv-26,conv-30)")
    e.add_argument("--k", default="5,10", help="recall cut-offs, comma-separated (default 5,10)")
    e.add_argument("--arms", default="all", help="'all' or a comma list of arms to evaluate (default all)")
    e.add_argument("--json", metavar="OUT", help="write the JSON report here ('-' for stdout)")
    e.add_argument("--plot", metavar="PNG", help="grouped bars, category x system (needs matplotlib)")
    e.add_argument("--no-ablations", action="store_true", help="skip the without-arm and optimizer-off rows")
    e.add_argument("--rrf-k", type=int, help="RRF constant k (default: FusionConfig)")
    e.add_argument("--depth", type=int, help="candidates fetched per arm (default: FusionConfig)")
    e.add_argument("--widen-below", type=int, help="widening threshold (default: FusionConfig)")
    e.add_argument("--pool-min", type=int, help="read a filtered arm off dense's results when they hold this "
                                                  "many matches; 0: never (default: FusionConfig)")
    e.add_argument("--weight", action="append", metavar="ARM=W", help="arm weight, repeatable")
    e.add_argument("--recency-weight", type=float, help="recency list weight on queries about the present "
                                                          "(default: FusionConfig, 0)")
    e.add_argument("--current-state-recency", type=float, help="recency list weight on current-state questions "
                                                                 "('now', 'currently'...; default: FusionConfig, 8)")
    e.add_argument("--half-life-days", type=float, help="recency half-life in days (default: FusionConfig, 365)")
    e.add_argument("--duplicate-cosine", type=float, help="near-duplicate cosine threshold; negative: equal "
                                                            "text only (default: FusionConfig, 0.92)")
    e.add_argument("--mmr", type=float, metavar="LAMBDA", help="MMR lambda in [0, 1] (default: off)")
    e.add_argument("--no-collapse", action="store_true", help="keep near-duplicates apart")
    e.add_argument("--no-supersede", action="store_true", help="no supersession by predicate")
    e.add_argument("--no-after", action="store_true", help="the stage after fusion off entirely (recency, "
                                                           "supersession, collapse, MMR)")
    e.add_argument("--store", help="keep the ingested store in this directory, which must be new or empty "
                                   "(default: temporary)")
    e.add_argument("--context-turns", type=int, default=DEFAULT_CONTEXT_TURNS, metavar="N",
                   help=f"preceding turns of a session indexed with each turn "
                        f"(default {DEFAULT_CONTEXT_TURNS}, 0: none)")
    e.add_argument("--backend", choices=("embedded", "qdrant-local"), default="embedded",
                   help="the embedded store (default), or what connect() builds (the server backend's code, the "
                        "graph in the engine) on qdrant-client's local mode")
    e.add_argument("--lexical", choices=("engine", "bm25"),
                   help="the lexical index: sparse vectors in the engine, or rank-bm25-exact in process "
                        "(default: the backend's, bm25 embedded and engine on a server)")
    e.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    e.set_defaults(fn=cmd_eval)

    b = subparsers.add_parser(
        "bench", help="ingest throughput, RSS, per-arm and ensemble latency at several corpus sizes",
        description="Synthetic realistic memories at each size: ingest throughput (and its overhead over "
                    "the embedder alone), RSS, per-arm and ensemble p50/p99, fan-out ratios, optimizer on "
                    "vs off, and the lexical arm vs plain rank-bm25, all measured side by side in one run. "
                    "Scale mode (--embedder hashing or --vectors FILE.npy, up to 1M memories on a small "
                    "machine): build time, then in a new process open time, first query (and first query in "
                    "a new namespace), each plan's p50/p99 against dense alone, RSS, disk.")
    b.add_argument("--n", default="1000,10000,100000", help="corpus sizes, comma-separated (default 1000,10000,100000: "
                                                           "the 100k size takes minutes)")
    b.add_argument("--json", metavar="OUT", help="write the JSON results here ('-' for stdout)")
    b.add_argument("--plot", metavar="PNG", help="latency vs n (needs matplotlib)")
    b.add_argument("--queries", type=int, default=200, help="mixed queries per size (default 200)")
    b.add_argument("--simple-queries", type=int, default=150,
                   help="queries of each set for optimizer on/off: the simple mix (a time, an identifier or a name "
                        "alone) and plain topical ones")
    b.add_argument("--seed", type=int, default=7, help="seed of the synthetic memories and queries (default 7)")
    b.add_argument("--lexical", choices=("engine", "bm25"),
                   help="the store's lexical index (default bm25: rank-bm25-exact in process; engine: sparse "
                        "vectors in the qdrant-edge shard)")
    b.add_argument("--store", metavar="DIR",
                   help="keep each size's store under DIR and reuse it on the next run (its ingest is then not "
                        "measured); a store there holding other memories is refused")
    b.add_argument("--embedder", choices=("default", "hashing"), default="default",
                   help="hashing: the scale mode with the hashing embedder's vectors (a 1M store builds in "
                        "minutes; rankings not meaningful, and the output says so)")
    b.add_argument("--vectors", metavar="FILE.npy",
                   help="the scale mode with precomputed memory vectors: the default embedder's vectors of the "
                        "synthetic memories, row i = memory i (make them with --write-vectors); queries embed "
                        "with the default embedder")
    b.add_argument("--write-vectors", metavar="FILE.npy",
                   help="embed the largest --n synthetic memories with the default embedder, write them for "
                        "--vectors, and stop")
    b.add_argument("--ner", action=argparse.BooleanOptionalAction, default=None,
                   help="scale mode: run NER at ingest (default off there; the default bench always runs it)")
    b.add_argument("--namespaces", type=int, metavar="K",
                   help="scale mode: spread the memories over K namespaces (default 1); latencies are measured in "
                        "one of them, and with K >= 2 the first query in another namespace is timed")
    b.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    b.set_defaults(fn=cmd_bench)

    t = subparsers.add_parser(
        "train-ranker", help="fit the learned order on labelled queries (eval JSONL format; needs [train])",
        description="Ingest M.jsonl into a fresh store, ask every query of Q.jsonl that has gold_ids once, and fit "
                    "the learned order (a logistic regression over each fused candidate's features) on which "
                    "candidates are gold. Load the result with FusionConfig(ranker=OUT) or "
                    "EnsembleMemory(store, ranker=OUT).")
    t.add_argument("--memories", required=True, metavar="M.jsonl")
    t.add_argument("--queries", required=True, metavar="Q.jsonl")
    t.add_argument("--out", required=True, metavar="ranker.json")
    t.add_argument("--c", type=float, default=1.0, help="inverse regularization strength (default 1.0)")
    t.add_argument("--depth", type=int, default=30, help="fused candidates per query it learns from "
                                                         "(default 30, as FusionConfig.learned_depth)")
    t.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    t.set_defaults(fn=cmd_train_ranker)

    tl = subparsers.add_parser(
        "timeline", help="first-answer accuracy on the personal-timeline set, per kind of question",
        description="Ingest one half of the personal-timeline set (personas of one life each, saved as an assistant "
                    "saves what a person says) into a fresh embedded store and ask every question at its persona's "
                    "'now': the share whose first hit is right per kind (current, past, window, plan, fact, who), "
                    "the false supersessions, the questions answered with nothing, and whether the first j hits "
                    "at k=j are the first j at k=10.")
    tl.add_argument("--data", default="benchmarks/data/timeline.jsonl", metavar="TIMELINE.jsonl",
                    help="the set (default: benchmarks/data/timeline.jsonl of a checkout)")
    tl.add_argument("--split", default="dev", choices=("dev", "test", "all"),
                    help="which half (default dev: tune on dev, score test once)")
    tl.add_argument("--order", choices=("learned", "rrf"), help="the order of the fused candidates (default: "
                                                                 "FusionConfig's)")
    tl.add_argument("--no-stability", action="store_true", help="skip asking each question at k=1..10")
    tl.add_argument("--show-misses", action="store_true", help="print each missed question with its top 3")
    tl.add_argument("--json", metavar="OUT", help="write the JSON report here ('-' for stdout)")
    tl.set_defaults(fn=cmd_timeline, plot=None, quiet=True)
