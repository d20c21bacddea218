"""What a write costs: single-memory `store.add` calls (what an agent saving one thing at a time
pays) against one batch of the same number of memories, on an embedded store.

Why: each write commits the journal, the lexical log and the graph with `synchronous=FULL` (three
fsyncs) so a power loss cannot leave the indexes disagreeing unseen
(docs/decisions/0041-lexical-index-kept-on-disk.md). A batch pays them once; a single add pays
them every time. The hashing embedder and no NER keep the model out of the measurement.

    python benchmarks/bench_add.py --singles 200 --batch 1000
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from fused_memory import Memory, MemoryStore
from fused_memory.embeddings import HashingEmbedder


def _memories(n: int, namespace: str, seed: int) -> list[Memory]:
    rng = random.Random(seed)
    words = [f"w{i}x" for i in range(300)]
    return [Memory(text=" ".join(rng.choices(words, k=12)), namespace=namespace, id=f"{namespace}-{i}")
            for i in range(n)]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--singles", type=int, default=200, help="single-memory adds to time")
    ap.add_argument("--batch", type=int, default=1000, help="memories in the one batch")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-add-") as tmp:
        store = MemoryStore.embedded(Path(tmp), embedder=HashingEmbedder(dim=384), ner=False, show_progress=False)
        with store:
            store.add(_memories(20, "warm", 1))
            singles = []
            for m in _memories(args.singles, "one-by-one", 2):
                t0 = time.perf_counter()
                store.add([m])
                singles.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            store.add(_memories(args.batch, "batch", 3))
            batch_ms = (time.perf_counter() - t0) * 1000
    single = statistics.median(singles)
    per_batched = batch_ms / args.batch
    print(f"single add: median {single:.2f} ms, p90 {sorted(singles)[int(0.9 * len(singles))]:.2f} ms "
          f"({args.singles} adds)")
    print(f"batch of {args.batch}: {batch_ms:.0f} ms, {per_batched:.3f} ms a memory")
    print(f"a single add costs {single / per_batched:.1f}x a memory of the batch")


if __name__ == "__main__":
    main()
