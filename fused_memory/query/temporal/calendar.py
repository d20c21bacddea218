"""The calendar under the temporal parser: the query's context, days and months in now's zone, and
the calendar units ("this quarter", "last month") that the point rules resolve against.

Split from `points.py` so the rule tables there stay readable: nothing here knows a phrase, only
dates (how the query is told, past or asking about plans, it asks of `tense.py`). Every span is
(first instant, last instant) in now's zone; `parse_time` clips it to now.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import cached_property

from dateutil.relativedelta import relativedelta

from .tense import asks_ahead, past_tense, present_tense
from .vocab import US

__all__ = ["Span", "Ahead", "Ctx", "at", "days", "recent", "upcoming", "ahead_if", "month_num", "span_months",
           "calendar_unit", "shift", "around"]

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")

#: (first instant, last instant) in now's zone.
Span = tuple[datetime, datetime]


class Ahead(tuple):
    """A span the query names as lying ahead ("next week", "this Friday" said on a Thursday):
    `parse_time` keeps it whole instead of clipping it to now. A plain tuple subclass, so it
    unpacks and compares as any span."""

    __slots__ = ()


@dataclass(frozen=True)
class Ctx:
    """What every rule handler reads besides its match: now, the last session end, the fuzzy-window
    settings ("recently", "a few months ago") and, for `past` and `plans`, the query's text."""

    now: datetime
    last_session_end: datetime | None
    recent_days: int
    few_months: tuple[int, int]
    #: The query's text, for `past` and `plans`.
    text: str = ""
    #: The text is a memory's, read where it was said (`statements.stated_times`), not a question:
    #: a phrase that could point either way reads ahead unless the text is told in the past ("booked
    #: the vet for the 14th" is the coming 14th, "we met on March 3" the last March 3).
    statement: bool = False

    @cached_property
    def past(self) -> bool:
        """The query is told in the past tense ("what did we do this Sunday?"): a phrase that could
        point either way ("this Sunday", "in 3 days", "today") reads back. Computed only when a
        rule asks (`tense.past_tense`)."""
        return past_tense(self.text)

    @cached_property
    def plans(self) -> bool:
        """The query asks about plans ("what do I have on Tuesday?"): a bare weekday or date is the
        one to come (`tense.asks_ahead`). Computed only when a rule asks. A statement is about plans
        whenever it is not told in the past ("dentist on Tuesday", "flight to Lisbon on April 2")."""
        return not self.past if self.statement else asks_ahead(self.text)

    @cached_property
    def coming(self) -> bool | None:
        """Which occurrence a date with no year ("June 14", "the 14th") is, by the tense: told in the
        past ("what did I do on June 23?"), the last one (False); in the present or the future
        ("what's happening on June 23?", "anything planned for the 14th?"), the coming one (True);
        with no verb to tell ("the 3rd of June?"), the nearest (None). A statement not told in the
        past is the coming one ("dentist on March 3")."""
        if self.past:
            return False
        return True if self.statement or self.plans or present_tense(self.text) else None


def at(c: Ctx, d: date) -> datetime:
    """Midnight of `d` in now's zone (pytz zones need localize, zoneinfo/fixed offsets do not)."""
    naive = datetime(d.year, d.month, d.day)
    localize = getattr(c.now.tzinfo, "localize", None)
    return localize(naive) if localize else naive.replace(tzinfo=c.now.tzinfo)


def days(c: Ctx, first: date, last: date) -> Span:
    """The whole days `first` to `last`: from the first one's midnight to the last one's last instant."""
    return at(c, first), at(c, last + timedelta(days=1)) - US


def recent(c: Ctx, month: int, day: int = 1) -> date | None:
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


def upcoming(c: Ctx, month: int, day: int | None = None) -> date | None:
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


def ahead_if(c: Ctx, span: Span) -> Span:
    """`span` kept whole (`Ahead`) when it reaches past now: a date the query asked of plans."""
    return Ahead(span) if span[1] > c.now else span


def month_num(word: str) -> int:
    """1-12 for a month's name or abbreviation ("Sept.", "march")."""
    return _MONTHS.index(word.lower().rstrip(".")[:3]) + 1


def span_months(c: Ctx, first: date, months: int) -> Span:
    """`months` whole months from `first`, the first of one."""
    return days(c, first, first + relativedelta(months=months, days=-1))


def calendar_unit(c: Ctx, unit: str, back: int) -> Span:
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
    return days(c, first, first + step - timedelta(days=1))


def shift(unit: str, n: int) -> relativedelta:
    """`n` days, weeks, fortnights, months or years, as a step to add to or take from a date."""
    if unit == "fortnight":
        return relativedelta(weeks=2 * min(n, 100))
    return relativedelta(**{unit + "s": min(n, 2000 if unit == "day" else 200)})  # huge N: stay in range


def around(c: Ctx, target: datetime, unit: str) -> Span:
    """"3 days ago" is that calendar day; weeks/months/years ago get half a unit's slack each side."""
    if unit == "day":
        return days(c, target.date(), target.date())
    half = {"week": relativedelta(days=3), "fortnight": relativedelta(days=3), "month": relativedelta(days=15),
            "year": relativedelta(months=6)}[unit]
    return days(c, (target - half).date(), (target + half).date())
