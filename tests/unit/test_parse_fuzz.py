"""Parser robustness: arbitrary text never raises (except QueryError for empty or too-long input),
never returns an inverted window, nor a future one unless the query names it as ahead ("next week",
"this Friday"), and always yields a valid plan."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fused_memory.errors import QueryError
from fused_memory.query import EntityMatcher, optimize, optimize_off, parse_query, parse_time
from fused_memory.query.optimizer import ANSWER_TIME_WEIGHT, PURE_TIME_WEIGHT
from fused_memory.query.temporal.future import FUTURE_PATTERN
from fused_memory.query.temporal.tense import asks_ahead, present_tense
from fused_memory.query.temporal.vocab import WD_ABBR, WD_FULL
from fused_memory.results import ARMS
from fused_memory.types import Entity
from tests.conftest import cpu_time

NOW = datetime(2024, 5, 15, 12, 0, tzinfo=timezone.utc)
MATCHER = EntityMatcher([Entity("sarah chen", "Sarah Chen", ("Sarah",), "PERSON", 3),
                         Entity("sarah park", "Sarah Park", ("Sarah",), "PERSON", 1),
                         Entity("may", "May", (), "PERSON", 1)])

#: The phrases that may name a window ahead of now: the future rule's; this week's days, weekend,
#: week, month and year, and today, asked of plans; a quarter of next year.
AHEAD = re.compile(rf"{FUTURE_PATTERN}|this\s+(?:{WD_FULL}|{WD_ABBR}|weekend|weeks?|months?|years?|morning|afternoon"
                   r"|evening)|today|tonight|.*quarter\s+of\s+(?:the\s+)?(?:next|coming)\s+year", re.IGNORECASE)
def ahead_ok(text: str, phrase: str) -> bool:
    """Whether a window ending after now is one the query named: a phrase ahead ("next week"), a
    date with its year ("May 2030"), a bare date or weekday asked of plans ("what's on Tuesday?"),
    or a date with no year or a weekday, which the present tense ("what's on Tuesday?") or, with no
    verb, nearness reads ahead ("May 1")."""
    return bool(AHEAD.fullmatch(phrase) or re.search(r"(?<!\d)(?:19|2[01])\d\d(?!\d)", phrase) or asks_ahead(text)
                or YEARLESS.search(phrase) or present_tense(text))


_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
YEARLESS = re.compile(rf"{_MONTH}\s+\d|\d(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}|the\s+\d\d?(?:st|nd|rd|th)", re.I)


#: Words the rules react to, so generated text exercises them far more often than random text would.
VOCAB = ("between and from to since before after until till last this next past previous few several a an couple "
         "one two "
         "of ago day days week weeks month months year years weekend May March june Feb Sept 2022 1999 2150 9077 "
         "15th 3rd 31 32 0 999 Q3 Q5 the on in during early late yesterday today tomorrow Tuesday tue sat summer "
         "winter recently lately we talked last time our conversation 5/8/2023 13/45/2023 2023-02-30 2023-13-01 "
         "29 Sarah Chen Park who is what when did I do happened prefer setting like tell me about also knows "
         ", . ? - – 's JIRA-9921 v2.3.1").split()
TEXTS = st.one_of(st.text(max_size=300), st.lists(st.sampled_from(VOCAB), max_size=16).map(" ".join))
ZONES = st.sampled_from([timezone.utc, timezone(timedelta(hours=-11)), timezone(timedelta(hours=13, minutes=45)),
                         ZoneInfo("America/New_York"), ZoneInfo("Australia/Lord_Howe")])
NOWS = st.datetimes(min_value=datetime(1901, 1, 1), max_value=datetime(9998, 1, 1), timezones=ZONES)
FUZZ = settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(text=TEXTS, now=NOWS, session_back=st.one_of(st.none(), st.integers(-3, 400)))
def test_parse_and_plan_never_raise(text: str, now: datetime, session_back: int | None) -> None:
    session = None if session_back is None else now - timedelta(days=session_back)
    try:
        parsed = parse_query(text, now=now, matcher=MATCHER, last_session_end=session)
    except QueryError:
        assert not text.strip()
        return
    w = parsed.temporal_window
    if w is not None:
        # only a window the query names as ahead ("next week", "tomorrow") may end after now
        assert w.start <= w.end and (w.end <= now or ahead_ok(text, parsed.temporal_phrase))
        assert parsed.time_cue and parsed.temporal_phrase
    shown = optimize(parsed)
    # a plan that needs no embedding (`query.shortcuts`) runs no dense arm; its fallback, the full plan, does
    assert ("dense" not in shown.arms) == (shown.shortcut is not None) == (shown.fallback is not None)
    for plan in (shown.fallback or shown, optimize_off(parsed)):
        assert "dense" in plan.arms and set(plan.arms) <= set(ARMS) and plan.fallback is None
        # multipliers of the base weights: at most 1, except the temporal arm on "when did...?"
        assert all(0.0 < plan.weights[a] <= (max(ANSWER_TIME_WEIGHT, PURE_TIME_WEIGHT) if a == "temporal" else 1.0)
                   for a in plan.arms)
        assert plan.max_hops in (2, 3)


@FUZZ
@given(text=TEXTS, now=NOWS, recent=st.integers(0, 3650), few=st.tuples(st.integers(0, 3650), st.integers(0, 3650)))
def test_parse_time_windows_are_never_inverted(text: str, now: datetime, recent: int, few: tuple[int, int]) -> None:
    m = parse_time(text, now, recent_days=recent, few_months=few)
    if m is not None:
        assert m.window.start <= m.window.end and (m.window.end <= now or ahead_ok(text, m.phrase))
        assert m.phrase and m.phrase in text


@pytest.mark.parametrize("text", ["", "   ", "\n\t "])
def test_empty_query_is_a_query_error(text: str) -> None:
    with pytest.raises(QueryError, match="empty"):
        parse_query(text, now=NOW)


def test_too_long_query_is_a_query_error() -> None:
    with pytest.raises(QueryError, match="limit is 100"):
        parse_query("x" * 101, now=NOW, max_chars=100)
    assert parse_query("x" * 100, now=NOW, max_chars=100).text == "x" * 100


def test_bad_arguments_are_query_errors() -> None:
    with pytest.raises(QueryError, match="timezone-aware"):
        parse_query("yesterday", now=datetime(2024, 5, 15))
    with pytest.raises(QueryError, match="string"):
        parse_query(b"bytes", now=NOW)  # type: ignore[arg-type]


def test_parsed_query_fields() -> None:
    p = parse_query("  what happened to JIRA-9921 with Sarah Chen yesterday?  ", now=NOW, matcher=MATCHER)
    assert p.text == "what happened to JIRA-9921 with Sarah Chen yesterday?" and p.now == NOW
    assert "JIRA-9921" in p.identifiers and "jira-9921" in p.terms
    assert [r.text for r in p.entity_refs] == ["Sarah Chen"]
    assert p.temporal_phrase == "yesterday" and p.time_cue


@pytest.mark.parametrize("text", [
    "what is " + " ." * 4990 + "x", "what is x" + " " * 9980 + "y", "who " * 2500, "I " * 3000 + "like",
    "between May 1 and " * 500, "a " * 5000, "tell me about " + "X" * 9000, "last " * 2000, "a's " * 2500,
], ids=["what-is-punct", "what-is-spaces", "who", "like", "between", "a", "tell", "last", "possessive"])
def test_long_adversarial_queries_stay_linear(text: str) -> None:
    """10k-character inputs built to make regexes backtrack: each parses in well under half a second
    of CPU (measured 10-90 ms; a quadratic pattern took 600 ms before its fix), counted by
    `cpu_time` so that neither a busy test machine nor a garbage collection makes this flaky."""
    with cpu_time() as took:
        optimize(parse_query(text[:10_000], now=NOW, matcher=MATCHER))
    assert took() < 0.5
