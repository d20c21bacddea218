"""Which explicit entity relation a query asks about, and in which direction.

"Who reports to Sarah?" asks for the other end of Sarah's `reports_to` edges, and asks it backwards
(Sarah is the relation's target: the answer is its source); "who does Tom report to?" asks Tom's
forwards. Only the graph knows those people, and they share no words with the question, so the graph
arm re-roots its walk at them (`store.graph_common`, "Asked relations") and the optimizer lets it
lead (`store_rules.asked_relation_leads`). Both read the decision made here, once per query.

A relation is asked when its name, read as words ("reports_to", "reportsTo", "reports-to" ->
"reports to"), occurs in the query as a verb phrase: the first word by its stem ("reported",
"reporting"), the rest as written ("to"). No tagger runs on queries, so "as a verb" is read from
the words around it, conservatively:

- not after a determiner or a possessive ("the report to the board", "Sarah's report");
- a one-word relation ("mentors", "knows") also needs a question word, an auxiliary or the entity
  right before it ("who mentors...", "does Sarah mentor...") and no preposition right after it
  ("what does Caroline know about pottery?" is not `knows`).

Direction: an entity named before the phrase is its subject (the relation's source), one named after
it its object; "by" right after the phrase turns that round ("who is managed by Sarah?"). A question
that names both ends of one relation ("does Lena report to Sarah?") asks whether that edge exists,
not who is at its other end: nothing is asked then, and the usual walk from both answers it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache

from ..text import stem
from ..types import EntityRef
from .entities import seed_candidates

__all__ = ["AskedRelation", "relation_words", "asked_relations"]

#: (entity id, relation name, forward): forward when the entity is the relation's source, so the
#: answers are the targets of its edges of that name; backward, the sources of edges into it.
AskedRelation = tuple[str, str, bool]

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_SPLIT = re.compile(r"[\s._\-/]+|(?<=[a-z0-9])(?=[A-Z])")
_DETERMINERS = frozenset("the a an my your his her their our its this that these those every each".split())
_LEADS = frozenset("who whom whose which what where does do did is was are were will would can could has "
                   "have had".split())
_PREPOSITIONS = frozenset("about of for with from to in on at into onto over under after before since "
                          "during like than".split())


@lru_cache(maxsize=4096)
def relation_words(rel: str) -> tuple[str, ...]:
    """A relation name as lower-case words: "reports_to", "reportsTo", "reports-to" -> ("reports", "to")."""
    return tuple(w.lower() for w in _SPLIT.split(rel.strip()) if w)


def _same(query_word: str, rel_word: str, first: bool) -> bool:
    return stem(query_word) == stem(rel_word) if first else query_word == rel_word or stem(query_word) == stem(rel_word)


def _phrases(words: list[tuple[str, int]], rel: tuple[str, ...], mention_ends: set[int]) -> list[tuple[int, int]]:
    """(start char, index after the phrase) of each verb-like occurrence of `rel` in `words`."""
    out = []
    for i in range(len(words) - len(rel) + 1):
        if not all(_same(words[i + j][0], w, j == 0) for j, w in enumerate(rel)):
            continue
        prev = words[i - 1][0] if i else ""
        if prev in _DETERMINERS or prev.endswith("'s"):
            continue
        after = words[i + len(rel)][0] if i + len(rel) < len(words) else ""
        if len(rel) == 1 and (after in _PREPOSITIONS or not (i == 0 or prev in _LEADS or i - 1 in mention_ends)):
            continue
        out.append((words[i][1], i + len(rel)))
    return out


def asked_relations(text: str, refs: Sequence[EntityRef],
                    relations: Callable[[str], Sequence[str]]) -> tuple[AskedRelation, ...]:
    """What `text` asks of the entities its `refs` resolve to (the candidates the graph arm seeds
    from: the best one, or all of an ambiguous ref's), given each entity's relation names; sorted."""
    by_ref = [(ref, [(c, rels) for c in seed_candidates(ref) if (rels := relations(c.entity_id))]) for ref in refs]
    if not any(cands for _, cands in by_ref):
        return ()  # the common case, and the only one without a relation in the store: no text work
    lower = text.lower()
    words = [(m.group(), m.start()) for m in _WORD.finditer(lower)]
    found: set[AskedRelation] = set()
    for ref, cands in by_ref:
        where = re.search(rf"(?<!\w){re.escape(ref.text.lower())}(?!\w)", lower) if ref.text and cands else None
        if where is None:
            continue
        ends = {i for i, (_, at) in enumerate(words) if where.start() <= at < where.end()}
        for cand, rels in cands:
            for rel in rels:
                for start, after in _phrases(words, relation_words(rel), ends):
                    passive = after < len(words) and words[after][0] == "by"
                    found.add((cand.entity_id, rel, (where.start() < start) != passive))
    both_ends = {rel for _, rel, fwd in found if (rel, not fwd) in {(r, f) for _, r, f in found}}
    return tuple(sorted(a for a in found if a[1] not in both_ends))
