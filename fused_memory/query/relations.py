"""Which explicit entity relation a query asks about: "who reports to Sarah?" names `reports_to`.

A relation is named when every index term of its name is among the query's terms (the BM25
analyzer on both sides, so "reports" and "report" agree and "to" is a stopword). A name made only
of stopwords ("is_a") names nothing. The graph arm re-roots its walk at the asked relation's other
end (`store.graph_common`), and the optimizer weights the graph arm up when a seed has one
(`store_rules.asked_relation_leads`).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from ..text import tokenize

__all__ = ["relation_terms", "asks_relation", "asked_relations"]


@lru_cache(maxsize=4096)
def relation_terms(rel: str) -> frozenset[str]:
    """The index terms of a relation name ("reports_to" -> {"report"}); stopwords drop out."""
    return frozenset(tokenize(rel.replace("_", " ")))


def asks_relation(rel: str, terms: frozenset[str]) -> bool:
    """True when `terms` (a query's index terms) name `rel`: all of its terms, and at least one."""
    need = relation_terms(rel) if terms else frozenset()
    return bool(need) and need <= terms


def asked_relations(rels: Iterable[str], terms: frozenset[str]) -> tuple[str, ...]:
    """The relations among `rels` that `terms` name, sorted and distinct."""
    return tuple(sorted({r for r in rels if asks_relation(r, terms)}))
