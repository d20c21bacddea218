"""Stage 1: query text -> `ParsedQuery` (terms, identifiers, entity refs, time window, time cue).

Pure and cheap by default (regexes, a dictionary lookup, no model): the ensemble parses every query,
so parsing must stay far below the cost of the arms it plans. spaCy runs only when the caller passes
`nlp` *and* the query holds a capitalized word the entity matcher could not place.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ..errors import QueryError
from ..results import ParsedQuery
from ..text import STOPWORDS, identifiers, tokenize
from ..validation import require_aware
from .cues import ANSWER_TIME, asks_time, has_time_cue
from .entities import EntityMatcher, Mention, ner_mentions
from .temporal import parse_time

__all__ = ["parse_query", "check_query_text", "check_embed_text", "DEFAULT_MAX_CHARS"]

DEFAULT_MAX_CHARS = 10_000

_CAPITALIZED = re.compile(r"[^\W\d_][\w'\u2019-]*")
#: Capitalized words that are not names: sentence starters, pronouns, calendar words.
_NOT_NAMES = STOPWORDS | frozenset(
    "tell show list give find remind remember please hey hi hello i'm i've i'd i'll "
    "january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday today yesterday tomorrow".split())


def check_query_text(text: str, max_chars: int = DEFAULT_MAX_CHARS, what: str = "query") -> str:
    """The query text stripped, or QueryError when no query can be answered for it: not a string,
    longer than `max_chars`, not valid Unicode (a lone surrogate), or empty. Callers holding many
    queries (the eval) check them all with this before spending time on any. `what` names the
    text in the errors (the ensemble also checks a caller's `embed_text` with it)."""
    if not isinstance(text, str):
        raise QueryError(f"{what} must be a string, got {type(text).__name__}")
    if len(text) > max_chars:
        raise QueryError(f"{what} is {len(text)} characters long; the limit is {max_chars} "
                         "(FusionConfig.max_query_chars). Shorten it or retrieve for its parts.")
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:  # a lone surrogate: no embedder or backend can take it
            raise QueryError(f"{what} is not valid Unicode text ({exc.reason} at {exc.start})") from None
    q = text.strip()
    if not q:
        raise QueryError(f"{what} is empty; ask for something (e.g. \"what's my badge ID?\")")
    return q


def check_embed_text(value: object, max_chars: int = DEFAULT_MAX_CHARS) -> str | tuple[str, ...]:
    """A caller's `embed_text`, checked like a query: one text, or several (then a tuple), together
    no longer than one query may be (each is embedded: a long list would outlive the arm's timeout
    and hold the next query's embedding up too)."""
    if isinstance(value, str):
        return check_query_text(value, max_chars, what="embed_text")
    if not isinstance(value, (list, tuple)) or not value:
        raise QueryError(f"embed_text must be a string or a non-empty list of strings, got {value!r:.60}")
    texts = tuple(check_query_text(t, max_chars, what="embed_text") for t in value)
    if sum(map(len, texts)) > max_chars:
        raise QueryError(f"embed_text is {sum(map(len, texts))} characters long in all; the limit is {max_chars} "
                         "(FusionConfig.max_query_chars)")
    return texts[0] if len(texts) == 1 else texts


def parse_query(text: str, *, now: datetime, matcher: EntityMatcher | None = None, nlp: Any = None,
                last_session_end: datetime | None = None, max_chars: int = DEFAULT_MAX_CHARS,
                recent_days: int = 30, few_months: tuple[int, int] = (90, 30)) -> ParsedQuery:
    """Parse one query.

    `now` (timezone-aware) anchors every relative time phrase; `matcher` is the namespace's known
    entities (None: no known-entity refs); `nlp` a spaCy pipeline for unknown names (None, the
    default, keeps spaCy off the hot path); `last_session_end` anchors "since we last talked";
    `recent_days` and `few_months` size "recently" and "a few months ago" (per namespace).
    Raises QueryError for non-string, empty or whitespace-only text, text longer than `max_chars`,
    text that is not valid Unicode (a lone surrogate), or a naive `now`.
    """
    q = check_query_text(text, max_chars)
    require_aware(now, "now")
    tm = parse_time(q, now, last_session_end=last_session_end, recent_days=recent_days,
                    few_months=few_months)
    time_span = _span_of(q, tm.phrase) if tm else None
    asks = asks_time(q)
    mentions = [m for m in (matcher.find(q) if matcher is not None else [])
                if time_span is None or not _inside((m.start, m.end), time_span)]  # "May" in "in May 2023"
    if nlp is not None and _unplaced_names(q, mentions, time_span):
        taken = [(m.start, m.end) for m in mentions] + ([time_span] if time_span else [])
        mentions += [m for m in ner_mentions(q, nlp) if not any(_overlaps((m.start, m.end), t) for t in taken)]
        mentions.sort(key=lambda m: m.start)
    return ParsedQuery(
        text=q, now=now, terms=tuple(tokenize(q)), identifiers=tuple(identifiers(q)),
        entity_refs=tuple(m.ref for m in mentions),
        temporal_window=tm.window if tm else None,
        time_cue=tm is not None or has_time_cue(q) or asks,
        temporal_phrase=tm.phrase if tm else None,
        temporal_rule=tm.rule if tm else None,
        answer_type=ANSWER_TIME if asks else None,
    )


def _unplaced_names(text: str, mentions: Sequence[Mention], time_span: tuple[int, int] | None) -> bool:
    """Is there a capitalized word (not a sentence starter or calendar word) no mention covers?"""
    covered = [(m.start, m.end) for m in mentions] + ([time_span] if time_span else [])
    for w in _CAPITALIZED.finditer(text):
        if not w.group()[0].isupper() or w.group().lower() in _NOT_NAMES:
            continue
        if not any(_inside((w.start(), w.end()), c) for c in covered):
            return True
    return False


def _span_of(text: str, phrase: str) -> tuple[int, int] | None:
    at = text.find(phrase)
    return (at, at + len(phrase)) if at >= 0 else None


def _inside(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return b[0] <= a[0] and a[1] <= b[1]


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]
