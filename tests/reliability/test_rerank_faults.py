"""A reranker that raises, hangs past its timeout or answers garbage (wrong length, NaN, not numbers)
never fails a query or loses a hit: the fused order stands and `failures` names "rerank". Sync and
async, over a real store. A hung reranker does not hold later queries: while its call runs past
the timeout it is not called again, and once it returns it is. A failed read of stored vectors costs
the near-duplicate check its vectors, nothing else."""

from __future__ import annotations

import asyncio
import math
import threading
import time

import pytest

from fused_memory import ConfigurationError, EnsembleMemory, FusionConfig, Memory
from fused_memory.embeddings import HashingEmbedder
from fused_memory.store.memory_store import MemoryStore
from tests.conftest import NOW
from tests.reliability._support import FaultProxy

NS = "alice"
TEXTS = ["Kestrel deploys on Fridays", "Kestrel is written in Rust", "The Kestrel team meets on Monday",
         "Kestrel's timeout is 45 seconds", "Sarah leads the Kestrel project", "Kestrel uses PostgreSQL"]
QUERY = "what do I know about Kestrel?"
#: Long enough that a query which did wait for it is told apart from one answered at once on a
#: loaded 2-core CI host (a whole query has taken 0.4 s there), short enough to keep the test quick.
TIMEOUT = 1.0


@pytest.fixture
def ensemble(tmp_path):
    store = MemoryStore.embedded(tmp_path / "s", embedder=HashingEmbedder(dim=128), ner=False).open()
    store.add([Memory(text=t, namespace=NS, id=f"m{i}") for i, t in enumerate(TEXTS)])
    ens = EnsembleMemory(store, FusionConfig(rerank_timeout_s=TIMEOUT))
    yield ens
    ens.close()
    store.close()


class Reverse:
    """Scores texts in reverse order of arrival: the reranker's order is the fused order reversed."""

    def rerank(self, query, texts):
        return [float(i) for i in range(len(texts))]


class Raises:
    def rerank(self, query, texts):
        raise RuntimeError("quota exceeded")


class Hangs:
    def __init__(self) -> None:
        self.release, self.calls = threading.Event(), 0

    def rerank(self, query, texts):
        self.calls += 1
        self.release.wait(30)
        return [float(i) for i in range(len(texts))]


class Answers:
    def __init__(self, answer) -> None:
        self.answer = answer

    def rerank(self, query, texts):
        return self.answer(texts)


GARBAGE = {
    "too few": Answers(lambda texts: [1.0] * (len(texts) - 1)),
    "too many": Answers(lambda texts: [1.0] * (len(texts) + 1)),
    "NaN": Answers(lambda texts: [math.nan] * len(texts)),
    "inf": Answers(lambda texts: [math.inf] + [0.0] * (len(texts) - 1)),
    "strings": Answers(lambda texts: ["high"] * len(texts)),
    "None": Answers(lambda texts: None),
    "a dict": Answers(lambda texts: {t: 1.0 for t in texts}),
}


def _run(ens: EnsembleMemory, mode: str, **kw):
    if mode == "sync":
        return ens.retrieve(QUERY, namespace=NS, k=6, now=NOW, **kw)
    return asyncio.run(ens.aretrieve(QUERY, namespace=NS, k=6, now=NOW, **kw))


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_good_reranker_orders_the_top_and_says_so(ensemble, mode):
    fused = _run(ensemble, mode).ids()
    r = _run(ensemble, mode, reranker=Reverse())
    assert r.ids() == fused[::-1] and r.reranked_by == "Reverse" and not r.failures
    first = r.hits[0]
    assert first.rank_before_rerank == 6 and first.rerank_score == 5.0
    assert "rerank 5.000: #6 -> #1" in first.explain() and "reranked by Reverse" in r.explain()
    assert r.to_json()["hits"][0]["rank_before_rerank"] == 6 and "rerank" in r.timings_ms


@pytest.mark.slow  # every kind of garbage, both paths: the fast lane keeps a raising reranker
@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("name", sorted(GARBAGE))
def test_garbage_answers_keep_the_fused_order(ensemble, mode, name):
    fused = _run(ensemble, mode)
    r = _run(ensemble, mode, reranker=GARBAGE[name])
    assert r.ids() == fused.ids() and all(h.rerank_score is None for h in r.hits)
    [failure] = r.failures
    assert (failure.arm, failure.kind) == ("rerank", "error") and "Answers" in failure.reason
    assert r.reranked_by is None


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_reranker_that_raises_keeps_the_fused_order(ensemble, mode):
    fused = _run(ensemble, mode)
    r = _run(ensemble, mode, reranker=Raises())
    assert r.ids() == fused.ids()
    [failure] = r.failures
    assert failure.arm == "rerank" and failure.kind == "error" and "quota exceeded" in failure.reason


@pytest.mark.slow  # waits out the rerank timeout
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_hung_reranker_times_out_and_does_not_hold_later_queries(ensemble, mode):
    fused = _run(ensemble, mode)
    hung = Hangs()
    try:
        t0 = time.perf_counter()
        r = _run(ensemble, mode, reranker=hung)
        assert time.perf_counter() - t0 < TIMEOUT + 2.0
        assert r.ids() == fused.ids() and [(f.arm, f.kind) for f in r.failures] == [("rerank", "timeout")]
        t0 = time.perf_counter()
        again = _run(ensemble, mode, reranker=hung)  # still running: not called, answered at once
        assert time.perf_counter() - t0 < TIMEOUT
        assert hung.calls == 1 and again.ids() == fused.ids() and "not called" in again.failures[0].reason
    finally:
        hung.release.set()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _run(ensemble, mode, reranker=Reverse()).failures:
        time.sleep(0.05)  # the hung call returns; then the reranker (any) is called again
    back = _run(ensemble, mode, reranker=Reverse())
    assert not back.failures and back.ids() == fused.ids()[::-1]


def test_the_ensembles_own_reranker_and_a_calls_own(tmp_path):
    store = MemoryStore.embedded(tmp_path / "s", embedder=HashingEmbedder(dim=128), ner=False).open()
    store.add([Memory(text=t, namespace=NS, id=f"m{i}") for i, t in enumerate(TEXTS)])
    plain = EnsembleMemory(store).retrieve(QUERY, namespace=NS, k=6, now=NOW).ids()
    ens = EnsembleMemory(store, reranker=Reverse())
    try:
        assert ens.retrieve(QUERY, namespace=NS, k=6, now=NOW).ids() == plain[::-1]
        assert ens.retrieve(QUERY, namespace=NS, k=6, now=NOW, reranker=Raises()).ids() == plain
        blend0 = EnsembleMemory(store, FusionConfig(rerank_blend=0.0), reranker=Reverse())
        shown = blend0.retrieve(QUERY, namespace=NS, k=6, now=NOW)
        assert shown.ids() == plain and shown.hits[0].rerank_score == 0.0  # scores shown, fused order kept
        depth2 = EnsembleMemory(store, FusionConfig(rerank_depth=2), reranker=Reverse())
        assert depth2.retrieve(QUERY, namespace=NS, k=6, now=NOW).ids() == [plain[1], plain[0], *plain[2:]]
        with pytest.raises(ConfigurationError, match="reranker"):
            EnsembleMemory(store, reranker="cohere")
    finally:
        ens.close()
        store.close()


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_failed_vector_read_leaves_equal_texts_collapsed_and_the_answer_whole(tmp_path, mode):
    store = MemoryStore.embedded(tmp_path / "s", embedder=HashingEmbedder(dim=128), ner=False).open()
    store.add([Memory(text=t, namespace=NS, id=f"m{i}") for i, t in enumerate(TEXTS)])
    store.add([Memory(text="Kestrel deploys on Fridays!", namespace=NS, id="copy"),
               Memory(text="Note: Kestrel deploys on Fridays", namespace=NS, id="near")])
    ens = EnsembleMemory(store, FusionConfig(duplicate_cosine=0.5))
    try:
        whole = _run(ens, mode)
        assert not whole.failures and {"copy", "near", "m0"} & set(whole.ids()) and len(whole.ids()) == 6
        store.vectors = FaultProxy(store.vectors).fail("vectors", times=100)
        r = _run(ens, mode)
        assert [(f.arm, f.kind) for f in r.failures] == [("collapse", "error")]
        assert "equal text only" in r.failures[0].reason
        assert len({"m0", "copy"} & set(r.ids())) == 1 and "near" in r.ids() and len(r.ids()) == 6
    finally:
        ens.close()
        store.close()
