"""Time cues on both sides of retrieval: does a query care about time, does it ask for one, and does
a memory state one?

"When did Caroline go to the support group?" names no window, so the temporal arm's range filter has
nothing to work with, yet the question says what its answer looks like: a time. The memory that
answers it almost always states one ("I went to a LGBTQ support group yesterday"). So a question
that *asks for* a time (`asks_time`) is matched against the memories that *state* one
(`mentions_time`, stored at ingest as the payload's `answers`). This is answer-type matching from
question answering, done with the same time rules the query parser uses, so both sides agree on what
a time expression is; a duration ("for 4 years") counts as a time, so "how long has...?" is matched
too (docs/decisions/0002-per-query-weights.md).
"""

from __future__ import annotations

import re

from ..enums import StrEnum
from ..types import TimeWindow
from .temporal import TIME_PATTERNS

__all__ = ["has_time_cue", "asks_time", "asks_past", "mentions_time", "answer_types", "temporal_mode", "TemporalMode",
           "ANSWER_TIME"]

class TemporalMode(StrEnum):
    """How the temporal arm reads a query (`temporal_mode`)."""

    WINDOW = "window"
    ANSWER = "answer"
    SPECULATIVE = "speculative"


#: The answer-type tag of a memory that states a time (payload field `answers`).
ANSWER_TIME = "time"

_I = re.IGNORECASE
_CUE = re.compile(
    r"(?<!\w)(?:when|whenever|what\s+time|what\s+date|which\s+(?:day|date|week|month|year|time)|how\s+long"
    r"|latest|newest|most\s+recent|recent|last\s+time|first\s+time|ago|earlier|before|after|since|until"
    r"|currently|current|right\s+now|at\s+the\s+moment|anymore|now|upcoming|the\s+other\s+day"
    r"|a\s+while\s+(?:ago|back)|last\s+(?:talked|spoke|chatted|met))(?!\w)", _I)

# "when" only as the question word (first word of a sentence or clause, or after "since"/"until"):
# "what did she say when we met" does not ask for a time. The other forms ask for one anywhere.
_ASKS = re.compile(
    r"(?:^|[.?!;]\s*|\b(?:and|but|so)\s+|\b(?:since|until|till|from)\s+)when(?!\w)"
    r"|(?<!\w)(?:(?:in|on|at|by|during)\s+)?(?:what|which)\s+(?:time|date|day|week|month|year|season)(?!\w)"
    r"|(?<!\w)how\s+(?:long|many\s+(?:days|weeks|months|years|hours))(?!\w)", _I)
# A duration states a time too: "I've known them for 4 years", "seven years now", "a couple of months".
_DURATION = re.compile(
    r"(?<!\w)(?:\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty"
    r"|a\s+few|few|a\s+couple\s+of|couple\s+of|several)\s+(?:hours?|days?|weeks?|months?|years?|decades?)(?!\w)",
    _I)


def has_time_cue(text: str) -> bool:
    """Does the query care about time, even without a window we can compute?

    True for cue words ("latest", "recent", "when", "last time", "ago", "since", "currently") and for
    anything a rule would read as a date ("yesterday", "on March 3rd", "in 2022", "next week"). With
    the optimizer off the temporal arm runs speculatively (half weight) on a cue without a window; a
    cue also keeps a query from being only names (`shapes.only_names`).
    """
    if not isinstance(text, str) or not text:
        return False
    return _CUE.search(text) is not None or mentions_time(text)


def asks_time(text: str) -> bool:
    """Is a time the answer the query wants ("when did...", "what year...", "how long has...")?

    Narrower than `has_time_cue`: "what is my current address?" cares about time but asks for an
    address. Only a question that asks for a time is matched against memories that state one."""
    if not isinstance(text, str) or not text:
        return False
    return _ASKS.search(text.strip()) is not None


# An earlier value of a fact that changed: "who was my manager before the reorg?", "what did I use
# to drive?", "my previous address", "formerly", "until March", "my old number". Not "how old".
_PAST = re.compile(
    r"(?<!\w)(?:before|used\s+to|use\s+to|previous(?:ly)?|former(?:ly)?|prior|originally|earlier|until|till"
    r"|(?<!how\s)old)(?!\w)", _I)


def asks_past(text: str) -> bool:
    """Does the question ask for an earlier value of something that changed ("before", "used to",
    "previous", "formerly", "until", "old")? Then the stage after fusion puts the older version of
    a fact first (`ensemble.versions.order_versions`)."""
    if not isinstance(text, str) or not text:
        return False
    return _PAST.search(text) is not None


def mentions_time(text: str) -> bool:
    """Does the text state a time the query parser would read ("yesterday", "last week", "in March",
    "7 May 2023", "next month") or a duration ("for 4 years")? Future and unresolvable phrases
    count: the text still says when, or for how long."""
    if not isinstance(text, str) or not text:
        return False
    return _DURATION.search(text) is not None or any(p.search(text) for p in TIME_PATTERNS)


def temporal_mode(window: TimeWindow | None, answer_type: str | None) -> TemporalMode:
    """How the temporal arm reads a query, decided here once for the optimizer, the selectivity rule
    and the arm itself: "window" (events inside the parsed window), "answer" (no window but a time is
    asked for: the memories that state one) or "speculative" (events by relevance, half weight)."""
    if window is not None:
        return TemporalMode.WINDOW
    return TemporalMode.ANSWER if answer_type == ANSWER_TIME else TemporalMode.SPECULATIVE


def answer_types(text: str) -> tuple[str, ...]:
    """The answer types a memory's text can serve, for the payload's `answers` field (indexed)."""
    return (ANSWER_TIME,) if mentions_time(text) else ()
