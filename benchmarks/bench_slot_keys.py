"""Write throughput with slot keys derived at write time against without, side by side.

    python benchmarks/bench_slot_keys.py [--n 2000] [--chunk 100] [--rounds 3]

Two fresh embedded stores ingest the same synthetic memories (`evaluation.synth.synth_memories`,
no predicates), chunk by chunk in turns, one with the extractor's slot keys on
(`EntityExtractor(slots=True)`, the default) and one with them off, so machine load falls on both
alike. Prints memories per second of each and their ratio (on / off), per round and the median.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence

from fused_memory import Memory, MemoryStore
from fused_memory.evaluation.synth import synth_memories
from fused_memory.store.ingest import EntityExtractor


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--chunk", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    memories = [Memory(text=m.text, namespace=m.namespace, created_at=m.created_at)
                for m in synth_memories(args.n, seed=11)]
    ratios = []
    for r in range(args.rounds):
        spent = {True: 0.0, False: 0.0}
        with tempfile.TemporaryDirectory() as tmp:
            stores = {on: MemoryStore.embedded(f"{tmp}/{on}") for on in (True, False)}
            try:
                for on, s in stores.items():
                    s.extractor = EntityExtractor(slots=on)
                    s.add([Memory(text="warm up the models", namespace="warm")])
                for i in range(0, len(memories), args.chunk):
                    chunk = [m.with_(namespace=f"r{r}") for m in memories[i:i + args.chunk]]
                    for on in ((True, False) if (i // args.chunk) % 2 == 0 else (False, True)):
                        t0 = time.perf_counter()
                        stores[on].add(chunk, show_progress=False)
                        spent[on] += time.perf_counter() - t0
            finally:
                for s in stores.values():
                    s.close()
        rate = {on: len(memories) / t for on, t in spent.items()}
        ratios.append(rate[True] / rate[False])
        print(f"round {r + 1}: slot keys on {rate[True]:.0f} mem/s, off {rate[False]:.0f} mem/s, "
              f"ratio {ratios[-1]:.3f}", file=sys.stderr)
    print(f"write throughput, slot keys on / off: median ratio {statistics.median(ratios):.3f} "
          f"over {args.rounds} rounds of {len(memories)} memories")


if __name__ == "__main__":
    main()
