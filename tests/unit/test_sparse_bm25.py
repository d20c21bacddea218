"""The engine lexical index's BM25 weights (`backends.lexical.sparse`), checked by hand: the document
side's saturation and length normalization, the query's terms, the fixed term ids (the stored format)
and the normalization `BM25Index` uses. The engine's side (IDF per namespace, the probes) is checked
on both engines in tests/contract/test_sparse_search.py."""

from __future__ import annotations

import math

import pytest

from fused_memory.backends.lexical.sparse import DEFAULT_AVGDL, SparseBM25, engine_idf, term_id
from fused_memory.backends.protocols import LexicalDoc, SparseVector
from fused_memory.text import tokenize
from fused_memory.types import MemoryType


def weight(tf: float, dl: float, k1: float = 0.9, b: float = 0.4, avgdl: float = DEFAULT_AVGDL) -> float:
    return tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))


def as_dict(v: SparseVector) -> dict[int, float]:
    return dict(zip(v.indices, v.values, strict=True))


def test_document_weights_are_bm25_saturation_with_fields_by_hand() -> None:
    # text: "kestrel" twice and "launch" once; predicate "kestrel" x4; context "launch date" at 0.5
    doc = LexicalDoc("m", "ns", "kestrel launch kestrel", "kestrel", MemoryType.FACT, context="launch date")
    assert tokenize(doc.text) == ["kestrel", "launch", "kestrel"] and tokenize("launch date") == ["launch", "date"]
    dl = 3 + 4 * 1 + 0.5 * 2  # text terms, predicate terms x4, context terms x0.5
    got = as_dict(SparseBM25().encode(doc))
    assert got == pytest.approx({term_id("kestrel"): weight(2 + 4, dl), term_id("launch"): weight(1 + 0.5, dl),
                                 term_id("date"): weight(0.5, dl)}, rel=1e-12)
    assert list(SparseBM25().encode(doc).indices) == sorted(got)  # ascending, as both engines store them


def test_length_normalization_follows_the_frozen_avgdl() -> None:
    doc = LexicalDoc("m", "ns", "kestrel", None, None)
    at_avg = as_dict(SparseBM25(avgdl=1.0).encode(doc))[term_id("kestrel")]
    assert at_avg == pytest.approx(1.0)  # tf = 1 at average length: (k1 + 1) / (1 + k1)
    longer = as_dict(SparseBM25(avgdl=0.5).encode(doc))[term_id("kestrel")]  # the doc is 2x the average
    assert longer == pytest.approx(weight(1, 1, avgdl=0.5)) and longer < at_avg


def test_term_ids_are_a_fixed_hash() -> None:
    """Stored vectors use these ids: a change of hash would orphan every stored sparse vector."""
    assert term_id("kestrel") == 1264483304
    assert term_id("e-47821") == 1468981630
    assert all(0 <= term_id(t) < 2 ** 32 for t in ("a", "ü", "jira-9921", "x" * 500))


def test_query_is_its_distinct_terms_at_weight_one() -> None:
    enc = SparseBM25()
    q = enc.query("Kestrel kestrel launch? the")
    assert as_dict(q) == {term_id("kestrel"): 1.0, term_id("launch"): 1.0}  # "the" is a stopword
    assert enc.query("the and of") is None and enc.query("") is None and enc.query(None) is None  # type: ignore[arg-type]


def test_normalization_is_raw_over_the_ideal_documents_score() -> None:
    q = SparseVector((1, 2, 3), (1.0, 1.0, 1.0))
    idf = (0.5, 2.0, None)  # the third term is in no memory of the namespace: counted at df = 1
    ideal = SparseBM25.ideal(q, idf, n_docs=10)
    assert ideal == pytest.approx(0.5 + 2.0 + math.log(1 + (10 - 1 + 0.5) / (1 + 0.5)))
    assert SparseBM25.normalized(1.0, ideal) == pytest.approx(1.0 / ideal)
    assert SparseBM25.normalized(10 * ideal, ideal) == 1.0 and SparseBM25.normalized(1.0, 0.0) == 0.0


def test_engine_idf_is_qdrants_formula() -> None:
    assert engine_idf(3, 2) == pytest.approx(math.log(1.6))
    assert engine_idf(5, 5) > 0  # never floored: a term in every document still counts a little
