"""Reports: plain-text tables for the terminal, JSON for machines, PNG plots for docs/.

matplotlib is an optional extra (`fused-memory[plot]`): it is imported only when a plot is asked
for, and its absence is a `MissingDependency` that says how to install it, never an ImportError
traceback, and never a cost for users who only want numbers.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError, MissingDependency
from ..terminal import terminal_safe
from .runner import EvalReport
from .synth import SHAPES

__all__ = ["format_table", "format_eval", "format_bench", "format_scale", "write_json", "plot_eval", "plot_bench",
           "plot_scale", "require_matplotlib", "check_output"]


def _auto(v: float) -> str:
    """Significant digits that matter: 12,345 / 123 / 12.3 / 1.23 / 0.123."""
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}" if a >= 1 else f"{v:.3f}"


def format_table(header: Sequence[str], rows: Sequence[Sequence[Any]], *, auto: bool = False) -> str:
    """A left-aligned first column and right-aligned numbers; floats with 3 decimals (metrics in
    [0, 1]) or, with `auto`, with the digits their magnitude deserves (timings, rates)."""
    def cell(v: Any) -> str:
        if v is None:
            return "-"
        if isinstance(v, float):
            return _auto(v) if auto else f"{v:.3f}"
        return terminal_safe(str(v), one_line=True)  # a category or name from the data

    cells = [[cell(v) for v in header]] + [[cell(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = []
    for j, row in enumerate(cells):
        parts = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)]
        lines.append("  ".join(parts).rstrip())
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def format_eval(report: EvalReport) -> str:
    """One table per metric: systems down, categories (then overall) across, with query counts."""
    cats = list(report.by_category)
    header = ["system", *(f"{c} ({report.n_by_category.get(c, 0)})" for c in cats), f"overall ({report.n_queries})"]
    blocks = []
    for metric in report.metrics:
        rows = [[s.name, *(report.by_category[c][s.name].get(metric) for c in cats),
                 report.overall[s.name].get(metric)] for s in report.systems]
        blocks.append(f"{metric}\n{format_table(header, rows)}")
    if report.margins:
        metric = next(iter(report.margins.values()))["metric"]
        rows = [[c, m["n"], m["best_arm"], f"{m['fused_minus_best']:+.3f}",
                 f"[{m['ci95'][0]:+.3f}, {m['ci95'][1]:+.3f}]" if m["ci95"] else "(too few)"]
                for c, m in report.margins.items()]
        blocks.append(f"fused minus the best single arm, {metric}, with its 95% paired bootstrap interval\n"
                      + format_table(["category", "questions", "best arm", "fused - best", "interval"], rows))
    failed = {s: n for s, n in report.failures.items() if n}
    if failed:
        blocks.append("arm failures/timeouts (results computed without them): "
                      + ", ".join(f"{s}={n}" for s, n in failed.items()))
    return "\n\n".join(blocks)


def _interval(bounds: Sequence[float] | None) -> str | None:
    return f"{bounds[0]:.2f}-{bounds[1]:.2f}" if bounds else None


def _row_of(results: Mapping[str, Mapping[str, Any]]) -> Callable[[str, Any], list[Any]]:
    """A table row maker over the sizes: the label, then `get` of each size's results (empty where
    that size lacks the field: a reused store has no ingest numbers)."""
    def row(label: str, get: Any) -> list[Any]:
        values = []
        for r in results.values():
            try:
                values.append(get(r))
            except (KeyError, TypeError):
                values.append(None)
        return [label, *values]
    return row


def _systems(results: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The systems timed at any size, first seen first."""
    return list(dict.fromkeys(s for r in results.values() for s in r.get("p50_ms", {})))


def _latency_rows(row: Callable[[str, Any], list[Any]], systems: Sequence[str]) -> list[list[Any]]:
    """Each system's p50 and p99 rows, in the systems' order."""
    return [row(f"{s} {q} ms", lambda r, s=s, q=q: r[f"{q}_ms"][s]) for s in systems for q in ("p50", "p99")]


def format_bench(results: Mapping[str, Mapping[str, Any]]) -> str:
    """Sizes across; ingest, memory, latency and ratio rows down."""
    if not results:
        return "(no sizes)"
    sizes, systems, row = list(results), _systems(results), _row_of(results)

    rows = [
        row("ingest memories/s", lambda r: r["ingest_per_s"]),
        row("embedder alone texts/s", lambda r: r["embed_per_s"]),
        row("ingest time / embedding time", lambda r: r["ingest_overhead"]),
        row("RSS MB", lambda r: r["rss_mb"]),
    ]
    rows += _latency_rows(row, systems)
    rows += [
        row("type arm read off dense (queries)", lambda r: f'{r["arm_pooled"].get("type", 0)}/{r["arm_runs"]["type"]}'),
        row("ensemble / slowest arm (median)", lambda r: r["fanout_over_slowest"]),
        row("  95% interval", lambda r: _interval(r["fanout_over_slowest_ci95"])),
        row("  floor: CPU time / cores / slowest", lambda r: r["fanout_cpu_floor"]),
        row("ensemble / sum of arms (median)", lambda r: r["fanout_over_sum"]),
        row("ensemble / dense alone p50 (same queries)", lambda r: r["vs_dense"]["p50_ratio"]),
        row("ensemble / dense alone p99 (same queries)", lambda r: r["vs_dense"]["p99_ratio"]),
        row("  p50, queries it embeds for", lambda r: r["vs_dense"]["embedding_plans"]["p50_ratio"]),
        row("  p99, queries it embeds for", lambda r: r["vs_dense"]["embedding_plans"]["p99_ratio"]),
        row("optimizer p99 on/off (simple mix)", lambda r: r["optimizer_p99_ratio"]),
        row("  95% interval", lambda r: _interval(r["optimizer_p99_ratio_ci95"])),
    ]
    for label, get in (("simple mix", lambda r: r["optimizer"]["mix"]),
                       *((f"  {shape}", lambda r, shape=shape: r["optimizer"]["shapes"][shape]) for shape in SHAPES),
                       ("plain topical", lambda r: r["optimizer"]["topical"])):
        rows += [
            row(f"{label}: p50 ms on / off", lambda r, get=get: f'{get(r)["on_p50_ms"]} / {get(r)["off_p50_ms"]}'),
            row(f"{label}: p99 ms on / off", lambda r, get=get: f'{get(r)["on_p99_ms"]} / {get(r)["off_p99_ms"]}'
                                                                 f' = {get(r)["p99_ratio"]}'),
            row(f"{label}: in top 10 on / off", lambda r, get=get: f'{get(r)["top10_on"]} / {get(r)["top10_off"]}'),
        ]
    rows += [
        row("lexical arm p50 ms", lambda r: r["lexical"]["ours_p50_ms"]),
        row("rank-bm25 get_scores p50 ms", lambda r: r["lexical"]["rank_bm25_p50_ms"]),
        row("lexical arm / rank-bm25 (p50)", lambda r: r["lexical_vs_rank_bm25"]),
    ]
    rows.append(row("load average (1 min) at start", lambda r: r["loadavg_1m"]))
    rows.append(row("CPU", lambda r: r["cpu_model"]))
    table = format_table(["n", *(f"{int(n):,}" for n in sizes)], rows, auto=True)
    plans = list(dict.fromkeys(p for r in results.values() for p in r.get("fanout_by_plan", {})))
    if not plans:
        return table

    def cell(r: Mapping[str, Any], plan: str) -> str | None:
        got = r.get("fanout_by_plan", {}).get(plan)
        return f'{got["fanout_over_slowest"]:.2f} ({got["queries"]})' if got else None

    by_plan = format_table(["ensemble / slowest arm by plan (queries)", *(f"{int(n):,}" for n in sizes)],
                           [[p, *(cell(results[n], p) for n in sizes)] for p in plans])
    return table + "\n\n" + by_plan


def _notes(results: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The distinct notes of a scale run's sizes (what made the vectors), first seen first."""
    return list(dict.fromkeys(str(r["note"]) for r in results.values() if r.get("note")))


def format_scale(results: Mapping[str, Mapping[str, Any]]) -> str:
    """The scale mode's table (`evaluation.scale`): what made the vectors on the first line, then
    sizes across; build, open, first queries, memory, disk, latency rows down; then each plan's
    ensemble against dense alone on the same queries."""
    if not results:
        return "(no sizes)"
    sizes, systems, row = list(results), _systems(results), _row_of(results)

    rows = [
        row("namespaces / memories in the queried one", lambda r: f'{r["namespaces"]} / {r["queried_namespace_n"]:,}'),
        row("build s (add + BM25 fold)", lambda r: r["build_s"]),
        row("build memories/s", lambda r: r["ingest_per_s"]),
        row("build peak RSS MB", lambda r: r["build_peak_rss_mb"]),
        row("disk MB", lambda r: r["disk_mb"]),
        row("disk KB / memory", lambda r: r["disk_kb_per_memory"]),
        row("embedder load s (apart)", lambda r: r["embedder_load_s"]),
        row("open s", lambda r: r["open_s"]),
        row("first query ms", lambda r: r["first_query_ms"]),
        row("  its plan ms", lambda r: r["first_query_plan_ms"]),
        row("first query, new namespace ms", lambda r: r["first_query_new_namespace_ms"]),
        row("  its plan ms", lambda r: r["first_query_new_namespace_plan_ms"]),
        row("open + first query s", lambda r: r["open_plus_first_query_s"]),
        row("RSS MB before open (interpreter, models)", lambda r: r["rss_before_open_mb"]),
        row("RSS MB after open", lambda r: r["rss_after_open_mb"]),
        row("RSS MB (after the queries)", lambda r: r["rss_mb"]),
        row("RSS over the models MB", lambda r: r["rss_over_models_mb"]),
        row("RSS KB / memory (over the models)", lambda r: r["kb_per_memory"]),
    ]
    rows += _latency_rows(row, systems)
    rows += [
        row("ensemble / dense alone p50 (same queries)", lambda r: r["vs_dense"]["p50_ratio"]),
        row("ensemble / dense alone p99 (same queries)", lambda r: r["vs_dense"]["p99_ratio"]),
        row("  p50, queries it embeds for", lambda r: r["vs_dense"]["embedding_plans"]["p50_ratio"]),
        row("  p99, queries it embeds for", lambda r: r["vs_dense"]["embedding_plans"]["p99_ratio"]),
        row("queries", lambda r: r["n_queries"]),
        row("load average (1 min) at start", lambda r: r["loadavg_1m"]),
        row("CPU", lambda r: f'{r["cpu_model"]} x{r["cpus"]}'),
    ]
    head = ["n", *(f"{int(n):,}" for n in sizes)]
    blocks = [*_notes(results), format_table(head, rows, auto=True)]
    plans = list(dict.fromkeys(p for r in results.values() for p in r.get("vs_dense_by_plan", {})))
    if plans:
        def cell(r: Mapping[str, Any], plan: str) -> str | None:
            got = r.get("vs_dense_by_plan", {}).get(plan)
            return f'{got["p50_ratio"]:.2f} / {got["p99_ratio"]:.2f} ({got["n"]})' if got else None

        blocks.append(format_table(["each plan / dense alone, p50 / p99 (queries)", *head[1:]],
                                   [[p, *(cell(results[n], p) for n in sizes)] for p in plans]))
    return "\n\n".join(blocks)


def write_json(data: Mapping[str, Any], target: str) -> None:
    """Pretty JSON to a file, or to stdout when `target` is "-"."""
    text = json.dumps(data, indent=2, sort_keys=False, default=str) + "\n"
    if target == "-":
        sys.stdout.write(text)
        return
    try:
        Path(target).parent.mkdir(parents=True, exist_ok=True)
        Path(target).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ConfigurationError(f"cannot write {target}: {exc.strerror or exc}") from None


def check_output(target: str | None, flag: str, *, plot: bool = False) -> None:
    """Refuse an output path that cannot be written *before* a run of minutes, not after it with
    the results lost: a directory, a parent that cannot be created or written, or (for a plot) a
    format matplotlib cannot save. Nothing is created here: missing parent directories are made
    when the results are written, so a run that fails leaves no empty folders behind."""
    if not target or (target == "-" and not plot):
        return
    if target == "-":
        raise ConfigurationError(f"{flag} -: a plot is an image file, not text for stdout; give a file name "
                                 "such as results.png")
    path = Path(target)
    if path.is_dir() or target.endswith(("/", os.sep)):
        raise ConfigurationError(f"{flag} {target}: is a directory; give a file name")
    existing = next(p for p in (path.absolute(), *path.absolute().parents) if p.exists())
    if existing != path.absolute() and not existing.is_dir():
        raise ConfigurationError(f"{flag} {target}: {existing} is a file, not a directory")
    try:
        with tempfile.NamedTemporaryFile(dir=existing if existing != path.absolute() else path.parent,
                                         prefix=".fused-memory-check-"):
            pass
    except OSError as exc:
        raise ConfigurationError(f"{flag} {target}: cannot write there ({exc.strerror or exc})") from None
    if plot and path.suffix:
        from matplotlib.backend_bases import FigureCanvasBase

        formats = FigureCanvasBase.get_supported_filetypes()
        if path.suffix[1:].lower() not in formats:
            raise ConfigurationError(f"{flag} {target}: matplotlib cannot save {path.suffix!r}; "
                                     f"use one of {', '.join('.' + f for f in sorted(formats))}")


def require_matplotlib() -> Any:
    """pyplot on the non-interactive Agg backend, or a MissingDependency saying what to install."""
    try:
        import matplotlib
    except ImportError:
        raise MissingDependency("plotting needs matplotlib: pip install 'fused-memory[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plot_eval(report: EvalReport, path: str, *, include_ablations: bool = False) -> str:
    """Grouped bars, category x system, one panel per metric (fused and single arms by default)."""
    plt = require_matplotlib()
    systems = [s.name for s in report.systems if include_ablations or s.kind != "ablation"]
    cats = [*report.by_category, "overall"]
    data = {**report.by_category, "overall": report.overall}
    fig, axes = plt.subplots(len(report.metrics), 1, figsize=(max(8, 1.6 * len(cats)), 3.2 * len(report.metrics)),
                             squeeze=False)
    width = 0.8 / max(1, len(systems))
    for ax, metric in zip(axes[:, 0], report.metrics, strict=True):
        for j, s in enumerate(systems):
            xs = [i + (j - (len(systems) - 1) / 2) * width for i in range(len(cats))]
            ax.bar(xs, [data[c][s].get(metric, 0.0) for c in cats], width, label=s)
        ax.set_xticks(range(len(cats)))
        ax.set_xticklabels([f"{c}\n(n={report.n_by_category.get(c, report.n_queries)})" for c in cats], fontsize=8)
        ax.set_ylim(0, 1)
        ax.set_ylabel(metric)
        ax.grid(axis="y", alpha=0.3)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.suptitle(f"fused-memory eval ({report.n_queries} queries)")
    fig.legend(handles, labels, ncol=min(6, len(systems)), fontsize=8, loc="upper center",
               bbox_to_anchor=(0.5, 0.965))
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    return _save(fig, plt, path)


def _latency_lines(ax: Any, results: Mapping[str, Mapping[str, Any]], thick: Collection[str], thin: float) -> None:
    """Each system's p50 (solid) and p99 (dashed) against n on `ax`, log-log; the `thick` systems
    drawn wider than the rest (`thin`)."""
    sizes = sorted(results, key=int)
    xs = [int(n) for n in sizes]
    systems = list(dict.fromkeys(s for n in sizes for s in results[n].get("p50_ms", {})))
    for i, s in enumerate(systems):
        for key, style in (("p50_ms", "-"), ("p99_ms", "--")):
            pts = [(x, results[n][key][s]) for x, n in zip(xs, sizes, strict=True)
                   if results[n].get(key, {}).get(s) is not None]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", color=f"C{i}",
                        label=f"{s} {key[:3]}", linewidth=2.5 if s in thick else thin)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylabel("latency, ms (query embedding included)")


def plot_bench(results: Mapping[str, Mapping[str, Any]], path: str) -> str:
    """Latency vs n (log-log): p50 solid, p99 dashed, one colour per system."""
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(8, 5))
    _latency_lines(ax, results, {"ensemble"}, 1.2)
    ax.set_xlabel("memories in the namespace")
    ax.set_title("fused-memory bench: latency vs n")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return _save(fig, plt, path)


def plot_scale(results: Mapping[str, Mapping[str, Any]], path: str) -> str:
    """The scale mode's plot: latency vs n (log-log; p50 solid, p99 dashed) beside open and first
    query times vs n, titled with what made the vectors (`SCALE_ONLY_NOTE` for the hashing embedder)."""
    plt = require_matplotlib()
    sizes = sorted(results, key=int)
    xs = [int(n) for n in sizes]
    fig, (lat, start) = plt.subplots(1, 2, figsize=(13, 5.2))
    _latency_lines(lat, results, {"ensemble", "dense"}, 1.0)
    spread = sorted({int(results[n].get("namespaces", 1)) for n in sizes})
    where = (f"memories in the store ({'/'.join(map(str, spread))} namespaces: latencies in one of them, "
             "which holds n / that)" if spread != [1] else "memories in the store (one namespace)")
    lat.set_xlabel(where, fontsize=8)
    lat.set_title("latency vs n")
    lat.grid(alpha=0.3, which="both")
    lat.legend(fontsize=7, ncol=2)
    for i, (key, label, scale) in enumerate((("open_s", "open", 1000.0), ("first_query_ms", "first query", 1.0),
                                             ("first_query_new_namespace_ms", "first query, new namespace", 1.0))):
        pts = [(x, results[n][key] * scale) for x, n in zip(xs, sizes, strict=True) if results[n].get(key) is not None]
        if pts:
            start.plot([p[0] for p in pts], [p[1] for p in pts], "-", marker="o", color=f"C{i}", label=label)
    start.set_xscale("log")
    start.set_yscale("log")
    start.set_xlabel("memories in the store")
    start.set_ylabel("ms")
    start.set_title("open and first queries (new process)")
    start.grid(alpha=0.3, which="both")
    start.legend(fontsize=8)
    fig.suptitle("fused-memory bench, scale mode: " + "; ".join(_notes(results)), fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return _save(fig, plt, path)


def _save(fig: Any, plt: Any, path: str) -> str:
    """Save and say where: a name without an extension gets ".png", as matplotlib would add it."""
    path = path if Path(path).suffix else path + ".png"
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=110)
        return path
    except (OSError, ValueError) as exc:  # ValueError: a format matplotlib does not know
        raise ConfigurationError(f"cannot write the plot {path}: {exc}") from None
    finally:
        plt.close(fig)
