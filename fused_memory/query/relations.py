"""Which explicit entity relation a query asks about, and in which direction.

"Who reports to Sarah?" asks for the other end of Sarah's `reports_to` edges, and asks it backwards
(Sarah is the relation's target: the answer is its source); "who does Tom report to?" asks Tom's
forwards. Only the graph knows those people, and they share no words with the question, so the graph
arm re-roots its walk at them (`backends.graph.traversal`, "Asked relations") and the optimizer lets it
lead (`store_rules.asked_relation_leads`). Both read the decision made here, once per query.

A relation is asked when the query is a wh-question (who, whom, whose, what, which, where) and the
relation's name, read as words ("reports_to", "reportsTo", "reports-to" -> "reports to"), occurs in
it as a verb phrase, every word by its stem ("reported to", "reporting to"). A name of stopwords only
("is", "has", "is_a") names nothing. No tagger runs on queries, so "as a verb" is read from the words
around it, conservatively:

- not after a determiner or a possessive ("the report to the board", "Sarah's report");
- a one-word relation ("mentors", "knows") also needs a question word, an auxiliary or the entity
  right before it ("who mentors...", "does Sarah mentor...") and no preposition right after it
  ("what does Caroline know about pottery?" is not `knows`).

Direction: an entity named before the phrase is its subject (the relation's source), one named after
it its object; "by" right after a passive verb turns that round ("who is managed by Sarah?"). An ask
counts only in a direction the entity has edges in (`Entity.relations` lists them directed). A
query that names entities on both sides of the phrase ("does Lena report to Sarah?", "which of
Tom's tickets did Priya work on?") is about those entities, not about who is at the other end:
nothing is asked then, and the usual walk from both answers it. Noun-like names ("manager_of":
"who is Tom's manager?") are missed by the determiner and possessive rule; that is the price of not
firing on "Sarah's quarterly report".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache

from ..results import EntityRef
from ..text import STOPWORDS, stem
from .entities import seed_candidates

__all__ = ["AskedRelation", "DirectedRelation", "relation_words", "asked_relations"]

#: (entity id, relation name, forward): forward when the entity is the relation's source, so the
#: answers are the targets of its edges of that name; backward, the sources of edges into it.
AskedRelation = tuple[str, str, bool]
#: (relation name, forward) of an entity: `Entity.relations`.
DirectedRelation = tuple[str, bool]

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")  # any script: a label "berät" is matched by "berät"
_SPLIT = re.compile(r"[\s._\-/]+|(?<=[a-z0-9])(?=[A-Z])")
_DETERMINERS = frozenset("the a an my your his her their our its this that these those every each".split())
_LEADS = frozenset("who whom whose which what where does do did is was are were will would can could has "
                   "have had".split())
_WH = frozenset("who whom whose what which where how".split())
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u02bc": "'", "\u2018": "'"})
_BE = frozenset("is was are were been being be".split())
_PREPOSITIONS = frozenset("about of for with from to in on at into onto over under after before since "
                          "during like than".split())


@lru_cache(maxsize=4096)
def relation_words(rel: str) -> tuple[str, ...]:
    """A relation name as lower-case words: "reports_to", "reportsTo", "reports-to" -> ("reports", "to");
    () when it has no content word ("is_a", "has", "_"): such a name is never asked."""
    words = tuple(w.lower() for w in _SPLIT.split(rel.strip()) if w)
    return words if any(w not in STOPWORDS and w not in _LEADS for w in words) else ()


def _phrases(words: list[tuple[str, int]], stems: Mapping[str, list[int]], rel: tuple[str, ...],
             mention_ends: set[int]) -> list[tuple[int, int]]:
    """(first, after) word indices of each verb-like occurrence of `rel` in `words`; `stems` maps a
    stem to the indices of the words that have it (so a store's many labels cost a lookup each)."""
    out: list[tuple[int, int]] = []
    for i in (stems.get(stem(rel[0]), ()) if rel else ()):
        if i + len(rel) > len(words) or not all(stem(words[i + j][0]) == stem(w) for j, w in enumerate(rel)):
            continue
        prev = words[i - 1][0] if i else ""
        if prev in _DETERMINERS or prev.endswith("'s"):
            continue
        after = words[i + len(rel)][0] if i + len(rel) < len(words) else ""
        if len(rel) == 1 and (after in _PREPOSITIONS or not (i == 0 or prev in _LEADS or i - 1 in mention_ends)):
            continue
        out.append((i, i + len(rel)))
    return out


def asked_relations(text: str, refs: Sequence[EntityRef],
                    relations: Callable[[str], Sequence[DirectedRelation]]) -> tuple[AskedRelation, ...]:
    """What `text` asks of the entities its `refs` resolve to (the candidates the graph arm seeds
    from: the best one, or all of an ambiguous ref's), given each entity's directed relations; sorted."""
    by_ref = [(ref, [(c, rels) for c in seed_candidates(ref) if (rels := relations(c.entity_id))]) for ref in refs]
    if not any(cands for _, cands in by_ref):
        return ()  # the common case, and the only one without a relation in the store: no text work
    lower = text.lower().translate(_APOSTROPHES)  # same length: offsets stay valid
    words = [(m.group(), m.start()) for m in _WORD.finditer(lower)]
    if not any(w.split("'")[0] in _WH for w, _ in words):  # "what's", "who's"
        return ()
    stems: dict[str, list[int]] = {}
    for i, (w, _) in enumerate(words):
        stems.setdefault(stem(w), []).append(i)
    spans = [(ref, _find(lower, ref.text.translate(_APOSTROPHES))) for ref, _ in by_ref]
    found: set[AskedRelation] = set()
    for (_ref, cands), (_, where) in zip(by_ref, spans, strict=True):
        if where is None or lower.startswith("'s", where[1]):
            continue  # not named, or named as an owner: "who reports to Sarah's manager?" is about the manager
        ends = {i for i, (_, at) in enumerate(words) if where[0] <= at < where[1]}
        for cand, rels in cands:
            for rel in sorted({name for name, _ in rels}):
                for first, after in _phrases(words, stems, relation_words(rel), ends):
                    start = words[first][1]
                    if _both_sides(spans, start):
                        continue  # about the named entities, not about who is at the other end
                    forward = (where[0] < start) != _passive(words, first, after)
                    if (rel, forward) in rels:
                        found.add((cand.entity_id, rel, forward))
    return tuple(sorted(found))


def _passive(words: list[tuple[str, int]], first: int, after: int) -> bool:
    """"is mentored by", "was managed by": a participle after a form of "be", then "by"."""
    return (after < len(words) and words[after][0] == "by" and words[first][0].endswith("ed")
            and any(w in _BE for w, _ in words[max(0, first - 3):first]))


def _find(lower: str, mention: str) -> tuple[int, int] | None:
    m = re.search(rf"(?<!\w){re.escape(mention.lower())}(?!\w)", lower) if mention else None
    return (m.start(), m.end()) if m else None


def _both_sides(spans: Sequence[tuple[EntityRef, tuple[int, int] | None]], at: int) -> bool:
    """True when the query names an entity before the phrase at `at` and another after it."""
    sides = {where[0] < at for _, where in spans if where is not None}
    return len(sides) == 2
