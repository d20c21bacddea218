"""`embed_text`: the vector arms embed the caller's text instead of the query (a HyDE answer,
LlamaIndex's `custom_embedding_strs`); BM25, entities and time still read the query. Real store,
real MiniLM and BM25, the demo's memories."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from fused_memory.demo import DEMO_NAMESPACE, DEMO_NOW
from fused_memory.ensemble import EnsembleMemory
from fused_memory.errors import QueryError

BADGE = "My employee badge ID is E-47821."
REASON = "caller_embed_text: the vector arms embed the caller's text, not the query"


@pytest.fixture
def ensemble(demo_ensemble: EnsembleMemory) -> EnsembleMemory:
    return demo_ensemble  # the demo's memories, shared by the integration tests that only read them


def _dense(ens: EnsembleMemory, query: str, **kw: object) -> list[tuple[str, float]]:
    r = ens.retrieve(query, namespace=DEMO_NAMESPACE, k=3, now=DEMO_NOW, arms=["dense"], **kw)
    return [(h.memory.text, h.contributions[0].raw_score) for h in r.hits]


def test_the_dense_arm_embeds_the_callers_text(ensemble: EnsembleMemory) -> None:
    plain = _dense(ensemble, "how do I get into the building?")
    hyde = _dense(ensemble, "how do I get into the building?", embed_text=BADGE)
    assert hyde[0][0] == BADGE and hyde[0][1] > 0.9  # the memory's own text (int8 query path: ~0.97)
    assert BADGE not in [t for t, _ in plain]        # the question alone shares nothing with it
    r = ensemble.retrieve("how do I get into the building?", namespace=DEMO_NAMESPACE, k=3, now=DEMO_NOW,
                          embed_text=BADGE)
    assert r.plan.embed_text == BADGE and r.plan.reasons[-1] == REASON and r.hits[0].memory.text == BADGE
    got = asyncio.run(ensemble.aretrieve("how do I get into the building?", namespace=DEMO_NAMESPACE, k=3,
                                         now=DEMO_NOW, arms=["dense"], embed_text=BADGE))
    assert [(h.memory.text, h.contributions[0].raw_score) for h in got.hits] == hyde


def test_bm25_still_reads_the_query(ensemble: EnsembleMemory) -> None:
    def lexical(**kw: object) -> list[str]:
        r = ensemble.retrieve("JIRA-9921", namespace=DEMO_NAMESPACE, k=3, now=DEMO_NOW, arms=["lexical"], **kw)
        return [h.memory.id for h in r.hits]
    assert lexical(embed_text="coffee preferences") == lexical()


@pytest.mark.parametrize("bad, says", [
    ("", "embed_text is empty"), ("   ", "embed_text is empty"), (42, "embed_text must be a string"),
    ("x" * 10_001, "embed_text is 10001 characters long"), ("\ud800", "embed_text is not valid Unicode"),
    ([], "a non-empty list of strings"), (b"badge", "a non-empty list of strings"),
    (["badge", " "], "embed_text is empty"), ([BADGE, 7], "must be a string"),
    (["x" * 6_000, "y" * 6_000], "12000 characters long in all"),
])
def test_bad_embed_text_is_refused(ensemble: EnsembleMemory, bad: object, says: str) -> None:
    with pytest.raises(QueryError, match=says):
        ensemble.retrieve("badge", namespace=DEMO_NAMESPACE, k=3, now=DEMO_NOW, embed_text=bad)  # type: ignore[arg-type]


def test_several_texts_are_embedded_one_by_one_and_averaged(ensemble: EnsembleMemory) -> None:
    """As LlamaIndex aggregates `custom_embedding_strs`: one embedding per text, normalized mean (a
    joined text lost the question once a HyDE answer filled MiniLM's 256 tokens)."""
    store = ensemble.store
    question = "how do I get into the building?"
    a, b = np.array(store.embed_query(BADGE)), np.array(store.embed_query(question))
    mean = (a + b) / np.linalg.norm(a + b)
    assert np.allclose(store.embed_query([BADGE, question]), mean, atol=1e-6)
    both = _dense(ensemble, question, embed_text=[BADGE, question])
    alone = _dense(ensemble, question, embed_text=BADGE)
    assert both[0][0] == BADGE and both[0][1] < alone[0][1] - 0.05  # the question pulled it away a little
    assert _dense(ensemble, question, embed_text=[BADGE]) == alone


def test_the_callers_text_replaces_what_the_masking_rules_would_embed(ensemble: EnsembleMemory) -> None:
    r = ensemble.retrieve("what did I tell Sarah last week?", namespace=DEMO_NAMESPACE, k=3, now=DEMO_NOW,
                          embed_text=BADGE)
    assert r.plan.embed_text == BADGE and r.plan.reasons[-1] == REASON
    assert not any(" -> vector arms embed " in x for x in r.plan.reasons)
