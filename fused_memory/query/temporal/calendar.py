"""The calendar under the temporal parser: the query's context, days and months in now's zone, and
the calendar units ("this quarter", "last month") that the point rules resolve against.

Split from `temporal_points.py` so the rule tables there stay readable: nothing here knows a
phrase, only dates. Every span is (first instant, last instant) in now's zone; `parse_time` clips
it to now.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from datetime import date, datetime, timedelta

from dateutil.relativedelta import relativedelta

__all__ = ["Ahead", "ahead_if", "_upcoming", "_I", "_US", "_MONTH_FULL", "_MONTH_ANY", "_YEAR", "_Span", "_Ctx", "_at", "_days", "_recent",
           "_month_num", "_span_months", "_calendar_unit"]

_I = re.IGNORECASE
_US = timedelta(microseconds=1)
_MONTH_FULL = r"(?:january|february|march|april|may|june|july|august|september|october|november|december)"
_MONTH_ANY = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
              r"|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_YEAR = r"(?<!\d)(?:19\d\d|2[01]\d\d)(?!\d)"
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")

_Span = tuple[datetime, datetime]


class Ahead(tuple):  # type: ignore[type-arg]
    """A span the query names as lying ahead ("next week", "this Friday" said on a Thursday):
    `parse_time` keeps it whole instead of clipping it to now. A plain tuple subclass, so it
    unpacks and compares as any span."""

    __slots__ = ()


@dataclass(frozen=True)
class _Ctx:
    now: datetime
    last_session_end: datetime | None
    recent_days: int
    few_months: tuple[int, int]
    #: The query's text, for `past`.
    text: str = ""

    @cached_property
    def past(self) -> bool:
        """The query is told in the past tense ("what did we do this Sunday?"): a phrase that could
        point either way ("this Sunday", "in 3 days", "today") reads back. Computed only when a
        rule asks (`temporal_future.past_tense`)."""
        from .future import past_tense  # it knows the phrases; this module only dates
        return past_tense(self.text)

    @cached_property
    def plans(self) -> bool:
        """The query asks about plans ("what do I have on Tuesday?"): a bare weekday or date is the
        one to come (`temporal_future.asks_ahead`)."""
        from .future import asks_ahead
        return asks_ahead(self.text)


def _at(c: _Ctx, d: date) -> datetime:
    """Midnight of `d` in now's zone (pytz zones need localize, zoneinfo/fixed offsets do not)."""
    naive = datetime(d.year, d.month, d.day)
    localize = getattr(c.now.tzinfo, "localize", None)
    return localize(naive) if localize else naive.replace(tzinfo=c.now.tzinfo)


def _days(c: _Ctx, first: date, last: date) -> _Span:
    return _at(c, first), _at(c, last + timedelta(days=1)) - _US


def _recent(c: _Ctx, month: int, day: int = 1) -> date | None:
    """The latest month/day on or before today (prefer the past; Feb 29 looks back to a leap year)."""
    today = c.now.date()
    for y in range(today.year, today.year - 9, -1):
        try:
            d = date(y, month, day)
        except ValueError:
            continue
        if d <= today:
            return d
    return None


def _upcoming(c: _Ctx, month: int, day: int | None = None) -> date | None:
    """The first month/day (or month, with `day` None) that has not ended yet: "April 2nd" asked of
    plans on March 19 is this year's, "March" on March 19 this very month."""
    today = c.now.date()
    for y in range(today.year, today.year + 9):
        try:
            d = date(y, month, day or 1)
        except ValueError:
            continue
        if (d if day else d + relativedelta(months=1, days=-1)) >= today:
            return d
    return None


def ahead_if(c: _Ctx, span: _Span) -> _Span:
    """`span` kept whole (`Ahead`) when it reaches past now: a date the query asked of plans."""
    return Ahead(span) if span[1] > c.now else span


def _month_num(word: str) -> int:
    return _MONTHS.index(word.lower().rstrip(".")[:3]) + 1


def _span_months(c: _Ctx, first: date, months: int) -> _Span:
    return _days(c, first, first + relativedelta(months=months, days=-1))


def _calendar_unit(c: _Ctx, unit: str, back: int) -> _Span:
    """The calendar week (Monday first), month, quarter or year holding today, or `back` of them
    before it: "this quarter" is back 0, "last quarter" back 1. Unlike "last month" alone, which is
    the rolling 30 days the issue specifies, these are whole units: "the end of last month" said on
    the 3rd is in the previous month, not in the past 30 days."""
    t = c.now.date()
    first, step = {"week": (t - timedelta(days=t.weekday()), relativedelta(weeks=1)),
                   "month": (t.replace(day=1), relativedelta(months=1)),
                   "quarter": (date(t.year, 3 * ((t.month - 1) // 3) + 1, 1), relativedelta(months=3)),
                   "year": (t.replace(month=1, day=1), relativedelta(years=1))}[unit]
    first -= step * back
    return _days(c, first, first + step - timedelta(days=1))
