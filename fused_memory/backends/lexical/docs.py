"""A memory's BM25 terms: its text, its predicate as a boosted field, its context at a weight.

Split from `bm25.py` because it is a separate concern: what a document *is* to BM25 (fields and
their weights), used by the index, by the bench's rank-bm25 baseline and by the tests that check
exactness against rank-bm25, while `bm25.py` keeps the index and its statistics.
"""

from __future__ import annotations

from collections import Counter

from ...text import tokenize
from ..protocols import LexicalDoc

__all__ = ["doc_terms", "doc_weights", "DEFAULT_CONTEXT_WEIGHT"]

#: How much a context term counts against a text term (see `Memory.context`). At full weight the
#: words of the question a turn answers count as much as the turn's own, so temporal questions (whose
#: words are in the turn itself) lose ground; at half weight the answer turn is still found by the
#: question's words without outvoting its own (docs/decisions/0009-conversation-context.md).
DEFAULT_CONTEXT_WEIGHT = 0.5


def doc_terms(doc: LexicalDoc, predicate_weight: int) -> list[str]:
    """A document's BM25 terms: its text's, then its predicate's repeated `predicate_weight` times.

    Repetition is field weighting in its simplest form (BM25F with integer boosts): a predicate
    term counts as `predicate_weight` occurrences, saturating through k1 like any repeat."""
    terms = tokenize(doc.text)
    if doc.predicate and predicate_weight > 0:
        terms.extend(tokenize(doc.predicate) * predicate_weight)
    return terms


def doc_weights(doc: LexicalDoc, predicate_weight: int,
                context_weight: float) -> tuple[dict[str, float], float]:
    """Term frequencies and length for BM25, with the context's terms at `context_weight`.

    BM25F in its simplest form: a field weight multiplies the field's term frequencies and its
    share of the document length, then one saturation applies (Robertson et al., 2004). With no
    context this is exactly `Counter(doc_terms(...))`, so plain documents score as rank-bm25's."""
    terms = doc_terms(doc, predicate_weight)
    freqs: dict[str, float] = dict(Counter(terms))
    length = float(len(terms))
    if doc.context and context_weight > 0:
        ctx = tokenize(doc.context)
        for term in ctx:
            freqs[term] = freqs.get(term, 0.0) + context_weight
        length += context_weight * len(ctx)
    return freqs, length
