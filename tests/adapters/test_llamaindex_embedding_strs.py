"""LlamaIndex query bundles that say what to embed: a query transform such as `HyDEQueryTransform`
puts a hypothetical answer in `custom_embedding_strs`, and LlamaIndex's own vector retrievers embed
those instead of the query. Ours do too (the core's `embed_text`); BM25 still reads `query_str`.
Before, the strings were ignored and the dense arm embedded the question."""

from __future__ import annotations

import asyncio

import pytest
from llama_index.core.schema import QueryBundle

import llama_index.retrievers.fused_memory as li
from fused_memory.ensemble import EnsembleMemory
from fused_memory.store.memory_store import MemoryStore

from ._seed import NOW, NS

BADGE = "My employee badge ID is E-47821."
QUESTION = "how do I get into the building?"


def _dense_top(store: MemoryStore, bundle: QueryBundle, use_async: bool = False) -> tuple[str, float]:
    r = li.DenseMemoryRetriever(store, namespace=NS, now=NOW, k=3)
    nodes = asyncio.run(r.aretrieve(bundle)) if use_async else r.retrieve(bundle)
    dense = nodes[0].node.metadata["contributions"][0]
    return nodes[0].node.text, dense["raw_score"]


@pytest.mark.parametrize("use_async", [False, True])
def test_custom_embedding_strs_are_what_dense_embeds(seeded_store: MemoryStore, use_async: bool) -> None:
    text, score = _dense_top(seeded_store, QueryBundle(QUESTION, custom_embedding_strs=[BADGE]), use_async)
    assert text == BADGE and score > 0.9
    plain_text, _ = _dense_top(seeded_store, QueryBundle(QUESTION), use_async)
    assert plain_text != BADGE


def test_hyde_with_the_original_query_averages_both(seeded_store: MemoryStore) -> None:
    """`HyDEQueryTransform(include_original=True)` gives [answer, question]: both are embedded and
    averaged, so the answer's memory still leads, at a cosine below the answer's alone."""
    text, both = _dense_top(seeded_store, QueryBundle(QUESTION, custom_embedding_strs=[BADGE, QUESTION]))
    _, alone = _dense_top(seeded_store, QueryBundle(QUESTION, custom_embedding_strs=[BADGE]))
    assert text == BADGE and both < alone - 0.05
    core = EnsembleMemory(seeded_store, optimizer=False)  # the core's average of the two, not one joined text
    hit = core.retrieve(QUESTION, namespace=NS, now=NOW, k=1, arms=["dense"], embed_text=[BADGE, QUESTION]).hits[0]
    core.close()
    assert hit.contributions[0].raw_score == pytest.approx(both, abs=1e-6)


def test_a_bundle_that_only_repeats_the_query_changes_nothing(seeded_store: MemoryStore) -> None:
    """A bundle whose strings are just the query leaves the core's own choice of what to embed (the
    query, or the query without the names of hub entities, `mask_hub_names`) in place."""
    r = li.EnsembleMemoryRetriever(seeded_store, namespace=NS, now=NOW, k=5)
    query = "what did I tell Sarah last week?"
    same = r.retrieve(QueryBundle(query, custom_embedding_strs=[query, "  "]))
    plain = r.retrieve(QueryBundle(query))
    assert [(n.node.node_id, n.score) for n in same] == [(n.node.node_id, n.score) for n in plain]
    forced = r.retrieve(QueryBundle(query, custom_embedding_strs=[query + "!"]))  # not equal: it is used
    assert [n.score for n in forced] != [n.score for n in plain]


@pytest.mark.parametrize("use_async", [False, True])
def test_a_verbose_hyde_answer_is_cut_as_an_embedder_cuts_it(seeded_store: MemoryStore, use_async: bool) -> None:
    """A 20,000-character hypothetical answer failed the whole retrieval (QueryError: the core holds
    `embed_text` to the query limit); LlamaIndex's embedders truncate, and MiniLM reads 256 word
    pieces anyway. Each string is cut to EMBED_CHARS; as many as fit the limit whole are embedded."""
    long_answer = BADGE + " It opens the doors." * 1000
    many = ["   ", "\n"] + [long_answer] * 10  # blank strings are skipped
    text, score = _dense_top(seeded_store, QueryBundle(QUESTION, custom_embedding_strs=many), use_async)
    core = EnsembleMemory(seeded_store, optimizer=False)
    fits = core.config.max_query_chars // li.retrievers.EMBED_CHARS  # only whole pieces
    cut = [long_answer[:li.retrievers.EMBED_CHARS].strip()] * fits
    hit = core.retrieve(QUESTION, namespace=NS, now=NOW, k=1, arms=["dense"], embed_text=cut).hits[0]
    core.close()
    assert text == BADGE and score == pytest.approx(hit.contributions[0].raw_score, abs=1e-6)
    padded, _ = _dense_top(seeded_store, QueryBundle(QUESTION, custom_embedding_strs=[" " * 3001 + BADGE]), use_async)
    assert padded == BADGE  # stripped before the cut (it was cut to blanks and refused as empty)
