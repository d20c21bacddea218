"""What listing a namespace costs, and what `FusedMemoryStore`'s operations cost beside LangGraph's
`InMemoryStore`.

Why: LangGraph's `search(prefix)` without a query, the write tools' session context and the memory
block's flushes all read a namespace (or one conversation of it) through `MemoryStore.memories`,
which sorts in Python, so it reads every matching payload. This measures:

1. `memories(namespace)` at each size, on qdrant-edge and qdrant-client's local mode;
2. one conversation of it (`session_id=`): the engine filtering (`PayloadLister.scroll_where`)
   against reading the whole namespace and filtering in Python (a backend without the
   capability), side by side, as a ratio;
3. `FusedMemoryStore` against `InMemoryStore` for put, get, search without a query (limit 10) and,
   for ours, search with a query (the fused ensemble; `InMemoryStore` without an index ignores the
   query, so it has no such row).

The hashing embedder stands in for MiniLM and NER is off: this measures the store's bookkeeping,
not the embedder (whose cost is in bench_embedder.py). Timings are medians of `--repeat` runs.

    python benchmarks/bench_listing.py [--sizes 1000 10000] [--sessions 20] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from fused_memory import Memory, MemoryStore
from fused_memory.backends import VectorBackend
from fused_memory.embeddings import HashingEmbedder
from fused_memory.store.listing import list_memories
from langchain_fused_memory import FusedMemoryStore

__all__ = ["main"]

WORDS = "coffee dog park badge meeting Berlin office lunch project deadline train window seat".split()


class _ScrollOnly:
    """A backend without `PayloadLister`: listing reads the namespace and filters in Python."""

    def __init__(self, inner: VectorBackend) -> None:
        self.inner = inner

    def scroll(self, namespace: str | None = None) -> Iterator[Mapping[str, Any]]:
        return self.inner.scroll(namespace)


def _median_ms(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def _text(i: int) -> str:
    return f"memory {i}: " + " ".join(WORDS[(i * k) % len(WORDS)] for k in (1, 3, 7))


def _store(kind: str, root: Path) -> MemoryStore:
    emb = HashingEmbedder(dim=384)
    if kind == "edge":
        return MemoryStore.embedded(root / "edge", embedder=emb, ner=False, show_progress=False)
    return MemoryStore.connect(qdrant_location=str(root / "client"), graph_path=str(root / "graph"), embedder=emb,
                               ner=False, show_progress=False)


def bench_listing(n: int, sessions: int, repeat: int, kind: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        store = _store(kind, Path(tmp)).open()
        store.add([Memory(text=_text(i), namespace="u1", session_id=f"s{i % sessions}") for i in range(n)])
        store.add([Memory(text=_text(i), namespace="u10") for i in range(n // 10)])  # a neighbour, never read
        row = {
            "namespace_ms": _median_ms(lambda: store.memories("u1"), repeat),
            "session_engine_ms": _median_ms(lambda: store.memories("u1", session_id="s3"), repeat),
            "session_python_ms": _median_ms(lambda: list_memories(_ScrollOnly(store.vectors), "u1", "s3"),
                                            repeat),  # type: ignore[arg-type]
        }
        store.close()
    return row


def bench_langgraph(n: int, repeat: int) -> dict[str, dict[str, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        memory = _store("edge", Path(tmp)).open()
        ours, theirs = FusedMemoryStore(memory), InMemoryStore()
        out: dict[str, dict[str, float]] = {}
        for name, store in (("fused", ours), ("in_memory", theirs)):
            ns = ("memories", "u1")
            t0 = time.perf_counter()
            store.batch([PutOp(ns, f"k{i}", {"content": _text(i), "n": i}) for i in range(n)])
            row = {"put_batch_per_item_ms": (time.perf_counter() - t0) * 1000 / n,
                   "put_one_ms": _median_ms(lambda s=store: s.put(("memories", "u1"), "one", {"content": "x"}),
                                            repeat),
                   "get_ms": _median_ms(lambda s=store: s.get(("memories", "u1"), "k7"), repeat),
                   "search_no_query_ms": _median_ms(lambda s=store: s.search(("memories",), limit=10), repeat),
                   "search_filter_ms": _median_ms(lambda s=store: s.search(("memories",), filter={"n": 7}), repeat)}
            if store is ours:
                row["search_query_ms"] = _median_ms(lambda s=store: s.search(("memories",), query="coffee badge"),
                                                    repeat)
            out[name] = row
        memory.close()
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--sessions", type=int, default=20, help="conversations the namespace is split into")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"listing": {}, "langgraph": {}}
    print(f"{'backend':<8} {'n':>7} {'namespace ms':>13} {'session: engine ms':>19} {'python ms':>10} {'ratio':>6}")
    for n in args.sizes:
        for kind in ("edge", "client"):
            row = bench_listing(n, args.sessions, args.repeat, kind)
            results["listing"][f"{kind}/{n}"] = row
            ratio = row["session_python_ms"] / max(row["session_engine_ms"], 1e-9)
            print(f"{kind:<8} {n:>7} {row['namespace_ms']:>13.1f} {row['session_engine_ms']:>19.1f} "
                  f"{row['session_python_ms']:>10.1f} {ratio:>5.1f}x")
    print()
    for n in args.sizes:
        rows = bench_langgraph(n, args.repeat)
        results["langgraph"][n] = rows
        for op in rows["fused"]:
            theirs = rows["in_memory"].get(op)
            ratio = f"{rows['fused'][op] / theirs:>8.0f}x" if theirs else "        -"
            print(f"n={n:<6} {op:<22} fused {rows['fused'][op]:>9.3f} ms   InMemoryStore "
                  f"{(f'{theirs:.3f}' if theirs else '-'):>9} ms {ratio}")
    return results


if __name__ == "__main__":
    main()
