"""The fused row of `fused-memory eval` for several FusionConfigs on one ingest (the same Evaluator,
so each row equals the command's fused row for that config; single arms and ablations are skipped).

    python benchmarks/bench_locomo_configs.py [--memories M.jsonl] [--queries Q.jsonl] \
        'name={"version_cosine": 0.5}' 'off={"supersede": false}' ... [--json out.json]

Prints R@5 and R@10 per category for each config.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

from fused_memory import FusionConfig
from fused_memory.evaluation import load_dataset
from fused_memory.evaluation.runner import Evaluator, System

LOCOMO = "../shared/bench/locomo/public/"


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("configs", nargs="*", help='name={"field": value, ...} (none: the defaults)')
    ap.add_argument("--memories", default=LOCOMO + "memories.jsonl")
    ap.add_argument("--queries", default=LOCOMO + "queries.jsonl")
    ap.add_argument("--json", help="write the reports here")
    args = ap.parse_args(argv)
    configs = {name: FusionConfig(**json.loads(spec)) for name, spec in (c.split("=", 1) for c in args.configs)}
    configs = configs or {"defaults": FusionConfig()}
    out = {}
    with Evaluator(load_dataset(args.memories, args.queries)) as ev:
        for name, config in configs.items():
            data = ev.evaluate((System("fused", None, True, "fused"),), config, ks=(5, 10), ndcg_ks=(10,)).to_json()
            out[name] = data
            for k in ("recall@5", "recall@10"):
                row = {c: round(v["fused"][k], 3) for c, v in data["by_category"].items()}
                print(f"{name} {k} overall {data['overall']['fused'][k]:.4f}", row, flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
