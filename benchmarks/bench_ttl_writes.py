"""The LangGraph store's write path with TTL on, beside the same path before TTL existed.

Why: a TTL adds an expiry to each payload (and a payload index on it) and a write stamps it, and
every read filters on it. The target is that writes with TTL on keep >= 0.9x of the throughput the
store had before. Three variants write the same items through `FusedMemoryStore.batch` (puts of
`--batch` items, `--items` in all, each into a fresh embedded store; the hashing embedder stands in
for MiniLM and NER is off, so the store's own bookkeeping is what is timed):

* `before`: the code of `--base` (a git commit, default the parent of the TTL change), run from an
  exported copy of it;
* `no-ttl`: this checkout, puts without a TTL;
* `ttl`: this checkout, every put with `ttl=60` minutes and a store-wide `TTLConfig`.

Each runs in its own process (the two code versions share package names), and the variants take
turns within each round, so load on the machine falls on all three alike; the medians of
`--rounds` rounds, their ratios, and the median of the per-round ratios are printed.

    python benchmarks/bench_ttl_writes.py [--items 2000] [--batch 50] [--rounds 5] [--base 5a89530]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent

_CHILD = r"""
import json, sys, tempfile, time
from langgraph.store.base import PutOp
from fused_memory import MemoryStore
from fused_memory.embeddings import HashingEmbedder
from langchain_fused_memory import FusedMemoryStore

items, batch, ttl = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "ttl"
with tempfile.TemporaryDirectory() as path:
    memory = MemoryStore.embedded(path, embedder=HashingEmbedder(dim=256), ner=False)
    config = {"default_ttl": 60, "refresh_on_read": True} if ttl else None
    store = FusedMemoryStore(memory, ttl=config) if ttl else FusedMemoryStore(memory)
    store.put(("warm",), "up", {"content": "opens the store before the clock starts"})
    texts = [f"user {i % 37} noted item {i}: the meeting about project {i % 11} moved to room {i % 7}"
             for i in range(items)]
    start = time.perf_counter()
    for i in range(0, items, batch):
        store.batch([PutOp(("bench", str(j % 5)), f"k{j}", {"content": texts[j]}, ttl=60 if ttl else None)
                     for j in range(i, min(items, i + batch))])
    seconds = time.perf_counter() - start
    memory.close()
print(json.dumps({"items_per_s": items / seconds}))
"""


def _run(code: Path, variant: str, items: int, batch: int) -> float:
    env = dict(os.environ, PYTHONPATH=f"{code}{os.pathsep}{code / 'integrations'}")
    out = subprocess.run([sys.executable, "-c", _CHILD, str(items), str(batch), variant], env=env,
                         cwd=tempfile.gettempdir(), capture_output=True, text=True, check=True)
    return float(json.loads(out.stdout.strip().splitlines()[-1])["items_per_s"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--base", default="5a89530", help="the commit to compare against (before TTL)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        archive = subprocess.run(["git", "archive", args.base, "fused_memory", "integrations"], cwd=_ROOT,
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
        runs: dict[str, list[float]] = {"before": [], "no-ttl": [], "ttl": []}
        for r in range(args.rounds):
            for variant in runs:
                code = base if variant == "before" else _ROOT
                runs[variant].append(_run(code, "ttl" if variant == "ttl" else "plain", args.items, args.batch))
            print(f"round {r + 1}: " + ", ".join(f"{v} {runs[v][-1]:.0f}/s" for v in runs), flush=True)
    med = {v: statistics.median(x) for v, x in runs.items()}
    print(f"\nmedian items/s over {args.rounds} rounds ({args.items} puts in batches of {args.batch}):")
    for v, m in med.items():
        print(f"  {v:7s} {m:8.0f}")
    paired = statistics.median(t / b for t, b in zip(runs["ttl"], runs["before"], strict=True))
    print(f"ttl / before  = {med['ttl'] / med['before']:.2f}x (median of the per-round ratios: {paired:.2f}x)")
    print(f"no-ttl / before = {med['no-ttl'] / med['before']:.2f}x")
    print(f"ttl / no-ttl  = {med['ttl'] / med['no-ttl']:.2f}x")


if __name__ == "__main__":
    main()
