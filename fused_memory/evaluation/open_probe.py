"""What opening a kept embedded store costs, measured in a fresh process: `open()`, the first
query, the first query in a namespace not used yet (with and without the graph), and the
resident memory after each, split into anonymous memory and mapped files.

Why a fresh process: a store opened a second time in one process finds its modules imported, its
allocator warmed and (before the lexical index was kept on disk) nothing else to learn; the
caller's process also holds the corpus it ingested. The page cache is warm either way (the store
was just written or read): the numbers are a warm open, which is what a restart is.

    python -m fused_memory.evaluation.open_probe STORE --embedder hashing:384 --namespaces a,b,c

prints one JSON object (`run_probe` runs it in a child process from Python). The store is any
embedded store, such as one `fused-memory bench --store` keeps.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

__all__ = ["probe", "run_probe", "memory_mb", "main"]

#: A topical query with no name and no time (dense + lexical), and one naming a person of the
#: synthetic corpus (the graph arm runs), both answerable in every bench namespace.
TOPICAL = "budget review meeting notes"
NAMED = "tell me about Sarah Chen"


def memory_mb() -> dict[str, float]:
    """VmRSS, RssAnon (heap, the process's own) and RssFile (mapped files: the page cache a memory
    pressure can take back) of this process, in MB (Linux /proc; {} elsewhere)."""
    out: dict[str, float] = {}
    try:
        with open("/proc/self/status", encoding="utf-8") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "RssAnon", "RssFile"):
                    out[key] = round(int(value.split()[0]) / 1024, 1)
    except OSError:
        pass
    return out


def _embedder(spec: str) -> Any:
    from ..embeddings import HashingEmbedder, default_embedder

    if spec.startswith("hashing"):
        _, _, dim = spec.partition(":")
        return HashingEmbedder(dim=int(dim or 384))
    return default_embedder()


def probe(path: str, embedder: str, namespaces: Sequence[str], now: Any = None) -> dict[str, Any]:
    """Open the store at `path` and ask it the probe's queries (module docstring); seconds and MB."""
    from ..embeddings.base import LoadsLazily
    from ..ensemble import EnsembleMemory
    from ..store.memory_store import MemoryStore
    from .synth import SYNTH_NOW

    now = now or SYNTH_NOW
    out: dict[str, Any] = {"loadavg_1m": round(os.getloadavg()[0], 2), "rss_imported": memory_mb()}
    emb = _embedder(embedder)
    t = time.perf_counter()
    if isinstance(emb, LoadsLazily):
        emb.load()
    out["model_load_s"] = round(time.perf_counter() - t, 4)
    out["rss_model"] = memory_mb()
    store = MemoryStore.embedded(path, embedder=emb, ner=False, show_progress=False)
    t = time.perf_counter()
    store.open()
    out["open_s"] = round(time.perf_counter() - t, 4)
    out["rss_open"] = memory_mb()
    ens = EnsembleMemory(store)
    try:
        def ask(text: str, ns: str) -> tuple[float, dict[str, float]]:
            t0 = time.perf_counter()
            result = ens.retrieve(text, namespace=ns, k=10, now=now)
            return round(time.perf_counter() - t0, 4), {k: round(v, 2) for k, v in result.timings_ms.items()}

        first, second = namespaces[0], namespaces[1] if len(namespaces) > 1 else namespaces[0]
        out["first_query_s"], out["first_query_ms"] = ask(TOPICAL, first)
        out["warm_query_s"], _ = ask(TOPICAL + " plan", first)
        out["first_query_new_namespace_s"], out["first_query_new_namespace_ms"] = ask(TOPICAL, second)
        if len(namespaces) > 2:
            out["first_named_query_new_namespace_s"], out["first_named_query_new_namespace_ms"] = \
                ask(NAMED, namespaces[2])
        out["named_query_warm_s"], _ = ask(NAMED, first)
        out["rss_first_queries"] = memory_mb()
        t = time.perf_counter()
        for ns in namespaces:
            ens.retrieve(NAMED, namespace=ns, k=10, now=now)
        out["every_namespace_s"] = round(time.perf_counter() - t, 3)
        out["rss_every_namespace"] = memory_mb()
    finally:
        ens.close()
        t = time.perf_counter()
        store.close()
        out["close_s"] = round(time.perf_counter() - t, 3)
    return out


def run_probe(path: str, embedder: str, namespaces: Sequence[str]) -> dict[str, Any]:
    """`probe` in a child process (module docstring)."""
    run = subprocess.run([sys.executable, "-m", "fused_memory.evaluation.open_probe", path, "--embedder", embedder,
                          "--namespaces", ",".join(namespaces)], capture_output=True, text=True, check=False)
    if run.returncode != 0:
        raise RuntimeError(f"the open probe failed ({run.returncode}): {run.stderr[-2000:]}")
    return dict(json.loads(run.stdout.strip().splitlines()[-1]))


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("store")
    ap.add_argument("--embedder", default="hashing:384", help="hashing[:DIM] or model (the default embedder)")
    ap.add_argument("--namespaces", required=True, help="comma-separated: the first is queried first, the next "
                                                        "ones are the 'new namespace' probes")
    args = ap.parse_args(argv)
    print(json.dumps(probe(args.store, args.embedder, args.namespaces.split(","))))


if __name__ == "__main__":
    main()
