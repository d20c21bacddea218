"""What the MCP server adds to a search: `search_memory` through `fused-memory mcp` over stdio (the
MCP SDK's client, the server a subprocess) against the same retrieval in process
(`EnsembleMemory.retrieve`), query by query, side by side in one run.

    python benchmarks/bench_mcp.py [--n 2000] [--queries 200] [--k 10] [--json out.json]

One synthetic corpus (`fused_memory.evaluation.synth`) is ingested once and copied, so the server
and the in-process ensembles each open their own identical store (an embedded store is one
process's) with its own embedder, whose query cache no other side warms. They take turns on every
query, so load on the host falls on all alike. The report gives the p50 / p99 of the call over
stdio and of `retrieve` in process, the p50 of their per-query difference (the overhead: JSON-RPC
over a pipe, argument checks, the answer's text, a thread hop), the p50 of a call the server
answers without the store (`k` = 0, refused: the protocol's round trip alone), and the p50 of the
tool's own code in process (`MemoryTools.call`: checks, retrieval, the answer's text).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from fused_memory import EnsembleMemory, MemoryStore
from fused_memory.evaluation.synth import synth_memories, synth_queries
from fused_memory.mcp_server import Grant, MemoryTools

__all__ = ["main", "measure"]

NAMESPACE = "bench"


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(n: int, n_queries: int, k: int) -> dict[str, Any]:
    memories = synth_memories(n, namespace=NAMESPACE)
    queries = [q.text for q in synth_queries(memories, n_queries)]
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
        served, local = Path(tmp) / "served", Path(tmp) / "local"
        with MemoryStore.embedded(served) as store:
            store.add(memories)
        shutil.copytree(served, local)
        shutil.copytree(served, Path(tmp) / "tools")  # its own store and embedder: no query cache shared
        params = StdioServerParameters(command=sys.executable, args=[
            "-m", "fused_memory.cli", "mcp", "--path", str(served), "--namespace", NAMESPACE, "--rate", "1000000"])
        with MemoryStore.embedded(local) as store, MemoryStore.embedded(Path(tmp) / "tools") as tool_store:
            ensemble, tool_ensemble = EnsembleMemory(store), EnsembleMemory(tool_store)
            tools, grant = MemoryTools(tool_store, tool_ensemble), Grant((NAMESPACE,), False, "bench")
            async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
                await client.initialize()

                async def over_mcp(query: str) -> float:
                    start = time.perf_counter()
                    result = await client.call_tool("search_memory", {"query": query, "k": k})
                    elapsed = (time.perf_counter() - start) * 1000
                    assert not result.isError, result.content
                    return elapsed

                async def round_trip() -> float:  # the protocol alone: a call refused before the store
                    start = time.perf_counter()
                    result = await client.call_tool("search_memory", {"query": "x", "k": 0})
                    elapsed = (time.perf_counter() - start) * 1000
                    assert result.isError
                    return elapsed

                async def tool_in_process(query: str) -> float:  # the server's code without the protocol
                    start = time.perf_counter()
                    answer = await tools.call("search_memory", {"query": query, "k": k}, grant)
                    elapsed = (time.perf_counter() - start) * 1000
                    assert not answer.error, answer.text
                    return elapsed

                def in_process(query: str) -> float:
                    start = time.perf_counter()
                    ensemble.retrieve(query, namespace=NAMESPACE, k=k)
                    return (time.perf_counter() - start) * 1000

                for query in queries[:10]:  # warm all three: model sessions, the pipe
                    await over_mcp(query)
                    await tool_in_process(query)
                    in_process(query)
                mcp_ms, local_ms, trip_ms, tool_ms = [], [], [], []
                for i, query in enumerate(queries):
                    trip_ms.append(await round_trip())
                    tool_ms.append(await tool_in_process(query))
                    if i % 2:
                        local_ms.append(in_process(query))
                        mcp_ms.append(await over_mcp(query))
                    else:
                        mcp_ms.append(await over_mcp(query))
                        local_ms.append(in_process(query))
            ensemble.close()
            tool_ensemble.close()
    diff = [a - b for a, b in zip(mcp_ms, local_ms, strict=True)]
    return {"n": n, "queries": len(queries), "k": k,
            "mcp_stdio_ms": {"p50": round(statistics.median(mcp_ms), 2), "p99": round(_pct(mcp_ms, 0.99), 2)},
            "in_process_ms": {"p50": round(statistics.median(local_ms), 2), "p99": round(_pct(local_ms, 0.99), 2)},
            "overhead_p50_ms": round(statistics.median(diff), 2),
            "p50_difference_ms": round(statistics.median(mcp_ms) - statistics.median(local_ms), 2),
            "round_trip_p50_ms": round(statistics.median(trip_ms), 2),
            "tool_in_process_p50_ms": round(statistics.median(tool_ms), 2),
            "ratio_p50": round(statistics.median(mcp_ms) / statistics.median(local_ms), 2)}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=2000, help="memories in the store")
    p.add_argument("--queries", type=int, default=200, help="queries, each run both ways")
    p.add_argument("--k", type=int, default=10, help="results per query")
    p.add_argument("--json", help="write the result here")
    args = p.parse_args(argv)
    result = asyncio.run(measure(args.n, args.queries, args.k))
    print(f"n={result['n']}, {result['queries']} queries, k={result['k']}")
    for name, key in (("search_memory over stdio", "mcp_stdio_ms"), ("in process (retrieve)   ", "in_process_ms")):
        print(f"  {name}: p50 {result[key]['p50']} ms, p99 {result[key]['p99']} ms")
    print(f"  overhead, p50 of the per-query difference: {result['overhead_p50_ms']} ms; difference of the p50s "
          f"{result['p50_difference_ms']} ms (ratio {result['ratio_p50']}x)")
    print(f"  a call that reads no memory (the protocol's round trip): p50 {result['round_trip_p50_ms']} ms")
    print(f"  the tool's code in process (no protocol): p50 {result['tool_in_process_p50_ms']} ms")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return result


if __name__ == "__main__":
    main()
