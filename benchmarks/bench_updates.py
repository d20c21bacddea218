"""Knowledge updates as people write them (`fused_memory.evaluation.updates`): the share of questions
whose answer comes first, per kind, on one half of the hand-written set.

    python benchmarks/bench_updates.py [--split dev|test|all] [--json out.json] [--show-misses]

current: the newest version first ("who is my manager currently?"); past: the version asked for
first ("who was my manager before the reorg?", "when did I move to Munich?"); still: the unchanged
fact in the top 3 and not marked superseded ("Do I still live in Porto?"). Score the test half once,
at the end; tune on dev.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fused_memory import EnsembleMemory, FusionConfig, MemoryStore
from fused_memory.evaluation.updates import UPDATE_KINDS, load_updates, score_update

DATA = Path(__file__).parent / "data" / "updates.jsonl"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", default="dev", choices=("dev", "test", "all"))
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--version-cosine", default=None,
                    help="FusionConfig.version_cosine, a number or 'none' (default: its default)")
    ap.add_argument("--show-misses", action="store_true", help="print each missed question with its top 3")
    args = ap.parse_args(argv)
    data = load_updates(args.data)
    cases = data.split(args.split)
    hits: dict[str, list[bool]] = {k: [] for k in UPDATE_KINDS}
    with tempfile.TemporaryDirectory(prefix="fused-memory-updates-") as tmp, MemoryStore.embedded(tmp) as store:
        t0 = time.perf_counter()
        store.add(data.memories(cases), show_progress=False)
        print(f"ingested {len(cases)} cases in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        config = FusionConfig() if args.version_cosine is None else FusionConfig(
            version_cosine=None if args.version_cosine == "none" else float(args.version_cosine))
        ens = EnsembleMemory(store, config)
        try:
            for case in cases:
                for q in case.queries:
                    r = ens.retrieve(q.text, namespace=case.namespace, k=5, now=data.now)
                    ids = [h.memory.id for h in r.hits]
                    superseded = [h.memory.id for h in r.hits if h.superseded_by]
                    ok = score_update(q, ids, superseded)
                    hits[q.kind].append(ok)
                    if args.show_misses and not ok:
                        print(f"MISS {q.kind:<7} {case.id}: {q.text!r} expected {q.expected}", file=sys.stderr)
                        for h in r.hits[:3]:
                            print(f"    {h.memory.id:<22} {h.memory.text!r}  {h.explain()}", file=sys.stderr)
        finally:
            ens.close()
    results = {k: {"share": round(sum(v) / len(v), 4) if v else None, "n": len(v)} for k, v in hits.items()}
    for k, row in results.items():
        print(f"{args.split:<5} {k:<8} {row['share']:.3f}  (n={row['n']})")
    out = {"args": vars(args), "results": results}
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=2)
    return out


if __name__ == "__main__":
    main()
