"""What shape a query has: only a time, only identifiers, only names, or anything else.

The optimizer's rules read these (`optimizer`, `shortcuts`): a query that is only a time ("what
happened yesterday?"), only identifiers ("E-47821", "what was JIRA-9921 about?") or only names
("Sarah Chen") has nothing a query embedding can add to what the window, BM25 or the graph find on
their own, so it gets a plan that needs no embedding. Pure functions of the `ParsedQuery`, so each
shape is tested without a store.

A query's *topic terms* are its terms (stemmed, stopwords dropped: `text.tokenize`) once the time
phrase and the words that carry no topic of their own in a question ("happened", "anything",
"tell") are taken out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..results import EntityRef, ParsedQuery
from ..text import tokenize

__all__ = ["GENERIC_TERMS", "SPOKEN", "MIN_REF_CONFIDENCE", "MAX_IDENTIFIER_COMPANIONS", "topic_terms",
           "strong_refs", "pure_time", "spoken", "identifiers_outside_time", "identifier_led", "only_names"]

#: Verbs of speech: "what did I tell you yesterday?" asks for what was *said* then, so the temporal
#: arm counts a memory said in the window as fully as one that happened there (`TemporalRetriever`).
SPOKEN = re.compile(r"\b(?:tell|told|say|said|talk(?:ed)?|discuss(?:ed)?|mention(?:ed)?|plan(?:ned)?)\b",
                    re.IGNORECASE)
#: Words that carry no topic of their own in a question ("what happened yesterday?", "anything from
#: last week?", "what's new on E-47821?", "what do I know about Sarah Chen?").
GENERIC_TERMS = frozenset(tokenize("happen happened happening change changed changes do did done doing go went "
                                   "gone thing things stuff anything something everything new news going "
                                   "tell told say said talk talked up plan planned know"))
#: A ref whose best candidate is below this is too weak to plan the graph arm on: a lone common
#: word that happens to be an alias of many entities ("meeting" -> 25 "<name> meeting" entities at
#: 0.04 each) would otherwise switch the graph on for almost every query without adding anything it
#: can rank (docs/decisions/0012-entity-extraction.md).
MIN_REF_CONFIDENCE = 0.3
#: Topic words an identifier may come with and still lead the query ("v2.3.1 release notes",
#: "latest on JIRA-9921"): BM25 ranks the memories holding the identifier first (it is rare, so its
#: IDF outweighs a common word's), and the few words order them. More words than this describe
#: something of their own, which the embedding is there to find.
MAX_IDENTIFIER_COMPANIONS = 2


def topic_terms(q: ParsedQuery) -> frozenset[str]:
    """The query's terms without its time phrase and the topic-free words (`GENERIC_TERMS`)."""
    phrase = set(tokenize(q.temporal_phrase or ""))
    return frozenset(t for t in q.terms if t not in phrase and t not in GENERIC_TERMS)


def strong_refs(q: ParsedQuery) -> list[EntityRef]:
    """The entity refs whose best candidate reaches `MIN_REF_CONFIDENCE`."""
    return [r for r in q.entity_refs if r.candidates and r.candidates[0].confidence >= MIN_REF_CONFIDENCE]


def identifiers_outside_time(q: ParsedQuery) -> tuple[str, ...]:
    """The query's identifiers that are not part of its time phrase ("2024-05-02" is a date there)."""
    return tuple(i for i in q.identifiers if i not in (q.temporal_phrase or ""))


def pure_time(q: ParsedQuery) -> bool:
    """A window and nothing else to go on: no topic words, entity or identifier outside its phrase."""
    return (q.temporal_window is not None and not topic_terms(q) and not q.entity_refs
            and not identifiers_outside_time(q))


def spoken(q: ParsedQuery) -> bool:
    """Does the query ask what was said (outside its time phrase)? See `SPOKEN`."""
    rest = q.text.replace(q.temporal_phrase, " ") if q.temporal_phrase else q.text
    return SPOKEN.search(rest) is not None


def _terms_of(texts: Iterable[str]) -> set[str]:
    return {t for text in texts for t in tokenize(text)}


def identifier_led(q: ParsedQuery) -> bool:
    """Identifiers, and at most `MAX_IDENTIFIER_COMPANIONS` other topic words: no window, and no name
    besides what the identifiers themselves hold ("JIRA-9921" may be a known entity)."""
    ids = identifiers_outside_time(q)
    if not ids or q.temporal_window is not None:
        return False
    id_terms = _terms_of(ids)
    if _terms_of(r.text for r in q.entity_refs) - id_terms:
        return False
    return len(topic_terms(q) - id_terms) <= MAX_IDENTIFIER_COMPANIONS


def only_names(q: ParsedQuery) -> bool:
    """Known names and nothing else ("Sarah Chen", "Sarah and Tom"): every ref strong, no other topic
    word, no time (neither a window nor a cue), no identifier."""
    refs = q.entity_refs
    if not refs or len(strong_refs(q)) != len(refs) or q.time_cue or q.identifiers:
        return False
    return not (topic_terms(q) - _terms_of(r.text for r in refs))
