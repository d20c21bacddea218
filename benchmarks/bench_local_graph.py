"""A graph question on `MemoryStore.connect(qdrant_location=FOLDER)` (qdrant-client's local mode)
against the same question on `MemoryStore.embedded(path)`, through the whole store.

    PYTHONPATH=. python benchmarks/bench_local_graph.py [--memories 2000] [--queries 40] [--engine]

Both stores hold `bench_graph`'s corpus (Zipfian mentions over `--entities` names, a user in every
memory and two speakers in half of them: hubs; explicit relations), written through
`MemoryStore.add` (hashing embedder, NER off, the mentions given as `Memory.entities`) and the
relations through `relate`. A graph question is `EnsembleMemory.retrieve(name, arms=["graph"])`
for one or two names drawn as the corpus draws them: the entity matcher, the walk (2 hops) and
the hydration of the hits. Each store is reopened before it is measured; every query is asked once
to warm the caches, then `--repeat` times, the stores taking turns query by query so a load on the
host falls on both. `--engine` adds the graph in the engine beside local mode (a `QdrantClient`
passed as `qdrant_client`, how a server keeps it), which local mode answers by scanning.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_graph import NOW, NS, _cumulative, _zipf_weights, build_corpus  # noqa: E402

from fused_memory import EnsembleMemory, Memory, MemoryStore  # noqa: E402
from fused_memory.embeddings import HashingEmbedder  # noqa: E402

__all__ = ["main"]


def _memories(size: int, entities: int) -> tuple[list[Memory], list[Any]]:
    items, rels = build_corpus(size, entities)
    memories = [Memory(text=f"A note about {', '.join(m.name for m in mentions)} (number {i}).", namespace=NS,
                       id=mid, type=kind, entities=tuple(m.name for m in mentions))
                for i, (mid, mentions, kind) in enumerate(items)]
    return memories, rels


def _fill(store: MemoryStore, memories: list[Memory], rels: list[Any]) -> MemoryStore:
    store.open()
    store.add(memories)
    for r in rels:
        store.relate(r.src, r.rel, r.dst, namespace=NS, kind=r.kind, confidence=r.confidence, valid_to=r.valid_to)
    store.close()
    return store


def _questions(entities: int, queries: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    cum = list(_cumulative(_zipf_weights(entities)))
    return ["who works with " + " and ".join(f"Ent{j:05d}" for j in rng.choices(range(entities), cum_weights=cum,
                                                           k=rng.choice((1, 1, 2)))) + "?" for _ in range(queries)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--memories", type=int, default=2000)
    ap.add_argument("--entities", type=int, default=2000)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--engine", action="store_true", help="also the engine graph beside local mode (slow)")
    args = ap.parse_args(argv)
    memories, rels = _memories(args.memories, args.entities)
    questions = _questions(args.entities, args.queries)
    emb = HashingEmbedder(dim=384)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        builds = {"embedded": lambda: MemoryStore.embedded(root / "embedded", embedder=emb, ner=False),
                  "connect(qdrant_location=)": lambda: MemoryStore.connect(
                      qdrant_location=str(root / "local"), embedder=emb, ner=False)}
        clients: list[Any] = []
        if args.engine:
            from qdrant_client import QdrantClient

            def engine() -> MemoryStore:
                if not clients:
                    clients.append(QdrantClient(path=str(root / "engine")))
                return MemoryStore.connect(qdrant_client=clients[0], embedder=emb, ner=False)
            builds["graph in the engine (local mode)"] = engine
        ingest = {}
        for name, build in builds.items():
            t = time.perf_counter()
            _fill(build(), memories, rels)
            ingest[name] = time.perf_counter() - t
        stores = {name: build().open() for name, build in builds.items()}
        ensembles = {name: EnsembleMemory(s) for name, s in stores.items()}
        answers: dict[str, list[list[str]]] = {name: [] for name in stores}
        for name, ens in ensembles.items():  # warm: the matcher, the caches, the first reads
            answers[name] = [ens.retrieve(q, namespace=NS, arms=["graph"], now=NOW).ids() for q in questions]
        lat: dict[str, list[float]] = {name: [] for name in stores}
        for _ in range(args.repeat):
            for q in questions:
                for name, ens in ensembles.items():
                    t = time.perf_counter()
                    ens.retrieve(q, namespace=NS, arms=["graph"], now=NOW)
                    lat[name].append((time.perf_counter() - t) * 1000)
        base = statistics.median(lat["embedded"])
        for name, ms in lat.items():
            ms.sort()
            p50 = statistics.median(ms)
            same = sum(a == b for a, b in zip(answers[name], answers["embedded"], strict=True))
            row = {"store": name, "memories": args.memories, "questions": len(ms),
                   "graph": type(stores[name].graph).__name__, "p50_ms": round(p50, 3),
                   "p90_ms": round(ms[int(0.9 * (len(ms) - 1))], 3), "x_embedded_p50": round(p50 / base, 2),
                   "same_hits_as_embedded": f"{same}/{len(questions)}", "ingest_s": round(ingest[name], 1)}
            print(json.dumps(row), flush=True)
        for ens in ensembles.values():
            ens.close()
        for s in stores.values():
            s.close()
        for c in clients:
            c.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
