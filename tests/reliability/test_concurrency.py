"""Concurrency: 8 reader threads and 1 writer against one embedded store for a bounded time.

Readers: four call the sync API (one arm, then the ensemble), four run an asyncio loop each and await
`aretrieve`. The writer alternates `add` and `await aadd`, and publishes a counter only after the call
returned. Expected: 0 exceptions; every read that starts after a write returned sees it (a reader
that saw the counter at n finds memory n-1 by its unique token, through the lexical arm and in the
ensemble's top k); no duplicate ids in any result; no arm failures (timeouts are generous: this is
about correctness under contention, not latency); and once the writer stops, every reader gets the
same answer to the same query, every time.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from fused_memory.config import FusionConfig
from fused_memory.ensemble import EnsembleMemory
from fused_memory.query.parse import parse_query
from fused_memory.results import ARMS, Retrieval
from fused_memory.retrievers.base import ArmRequest
from fused_memory.types import Memory, MemoryType

from _support import NOW, counts, embedded

NS = "busy"
DURATION_S = 4.0
READERS = 8
STABLE_QUERIES = ("what does Sarah Chen think about Kestrel?", "badge number", "what did I do last week?")


def _token(n: int) -> str:
    return f"zq{n:05d}k"


def _memory(n: int) -> Memory:
    people = ("Sarah Chen", "Tom Baker", "Priya Natarajan")
    return Memory(text=f"{people[n % 3]} noted item {_token(n)} about the Kestrel rollout", namespace=NS,
                  id=f"w-{n}", entities=(people[n % 3], "Kestrel"),
                  type=(MemoryType.FACT, MemoryType.PREFERENCE, MemoryType.EVENT)[n % 3])


def _seed() -> list[Memory]:
    return [Memory(text=f"background fact {i}: badge number {40000 + i} for Sarah Chen on Kestrel", namespace=NS,
                   id=f"s-{i}", entities=("Sarah Chen", "Kestrel")) for i in range(40)]


def _unique(result: Retrieval) -> None:
    ids = result.ids()
    assert len(ids) == len(set(ids)), ids
    assert all(h.memory.namespace == NS for h in result.hits)
    assert not result.failures, result.failures


@pytest.mark.slow  # eight reader threads and a writer for seconds
def test_eight_readers_one_writer(tmp_path: Path) -> None:
    store = embedded(tmp_path / "store").open()
    store.add(_seed())
    ens = EnsembleMemory(store, FusionConfig(timeouts_s=dict.fromkeys(ARMS, 30.0)), max_workers=16)
    lexical = store.retriever("lexical")
    published = [0]  # memories 0..published-1 have been added (their add returned)
    lock = threading.Lock()
    stop = threading.Event()
    errors: list[BaseException] = []
    reads = [0] * READERS

    def check_visible(n: int, result: Retrieval | None, lex_ids: list[str]) -> None:
        want = f"w-{n}"
        assert want in lex_ids, f"lexical arm missed {want} after its add returned"
        if result is not None:
            _unique(result)
            assert want in result.ids(), f"ensemble missed {want} after its add returned"

    def guard(fn: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                fn()
            except BaseException as exc:  # noqa: BLE001 - collected and asserted on below
                errors.append(exc)
                stop.set()
        return run

    def writer() -> None:
        loop = asyncio.new_event_loop()
        n = 0
        try:
            while not stop.is_set():
                m = _memory(n)
                if n % 2:
                    loop.run_until_complete(store.aadd(m))
                else:
                    store.add(m)
                with lock:
                    published[0] = n + 1
                n += 1
                time.sleep(0.002)
        finally:
            loop.close()

    def sync_reader(i: int) -> None:
        rng = random.Random(i)
        while not stop.is_set():
            with lock:
                n = published[0]
            if not n:
                continue
            target = n - 1 if rng.random() < 0.5 else rng.randrange(n)
            req = ArmRequest(parse_query(_token(target), now=NOW), NS, 10)
            hits = lexical.search(req)
            assert len({h.memory_id for h in hits}) == len(hits)
            result = ens.retrieve(f"item {_token(target)}", namespace=NS, k=10, now=NOW)
            check_visible(target, result, [h.memory_id for h in hits])
            reads[i] += 1

    def async_reader(i: int) -> None:
        rng = random.Random(i)

        async def loop_body() -> None:
            while not stop.is_set():
                with lock:
                    n = published[0]
                if not n:
                    await asyncio.sleep(0.001)
                    continue
                target = n - 1 if rng.random() < 0.5 else rng.randrange(n)
                result, other = await asyncio.gather(
                    ens.aretrieve(f"item {_token(target)}", namespace=NS, k=10, now=NOW),
                    ens.aretrieve(rng.choice(STABLE_QUERIES), namespace=NS, k=10, now=NOW))
                _unique(other)
                check_visible(target, result, [m for m, _ in store.lexical.search(NS, _token(target), 10)])
                reads[i] += 1

        asyncio.run(loop_body())

    threads = [threading.Thread(target=guard(writer), name="writer")]
    threads += [threading.Thread(target=guard(lambda i=i: (sync_reader if i < 4 else async_reader)(i)), name=f"r{i}")
                for i in range(READERS)]
    for t in threads:
        t.start()
    stop.wait(DURATION_S)
    stop.set()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads), "a thread did not stop"
    try:
        assert not errors, f"{len(errors)} exceptions, first: {errors[0]!r}"
        written = published[0]
        assert written > 20 and min(reads) > 0, (written, reads)
        assert counts(store, NS) == (40 + written,) * 3
        assert [m.id for m in store.get_many(NS, [f"w-{n}" for n in range(written)])] == [
            f"w-{n}" for n in range(written)]

        # quiet now: every reader, sync or async, gets the same answer, every time
        answers: dict[str, set[tuple[tuple[str, float], ...]]] = {q: set() for q in STABLE_QUERIES}

        def ask(i: int) -> None:
            for q in STABLE_QUERIES * 3:
                r = (ens.retrieve(q, namespace=NS, k=10, now=NOW) if i % 2 else
                     asyncio.run(ens.aretrieve(q, namespace=NS, k=10, now=NOW)))
                _unique(r)
                with lock:
                    answers[q].add(tuple((h.memory.id, round(h.score, 12)) for h in r.hits))

        quiet = [threading.Thread(target=guard(lambda i=i: ask(i))) for i in range(READERS)]
        for t in quiet:
            t.start()
        for t in quiet:
            t.join(60)
        assert not errors, errors[0]
        assert all(len(a) == 1 for a in answers.values()), {q: len(a) for q, a in answers.items()}
        print(f"\n{written} writes, {sum(reads)} checked reads by {READERS} readers in {DURATION_S:.0f}s")
    finally:
        ens.close()
        store.close()
