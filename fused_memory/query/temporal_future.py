"""Windows ahead of now: "tomorrow", "next week", "in 3 days", "later this month".

An agent's memories hold plans as well as history: a memory stored with `event_at` on the 3rd of
next month ("dentist at 10:00") is what "what do I have next week?" asks for. These phrases used to
be read and masked (so no other rule misread "next May" as a past May) but gave no window, and such
a query found its events by words alone. Readings mirror the past side's: "next Friday" is the
first Friday after today (as "last Tuesday" is the latest Tuesday before it, dateparser's reading
on both sides); "next week / month / year" are the next calendar units (Monday first), "next
weekend" the weekend of next week; "the coming week" and "the next 3 days" run from now, "the
coming weekend" is the first one after today; "in 3 days" is that day, "in 2
weeks" that week with half a week's slack each side (as "2 weeks ago"); "in a few days" 1-3 days
ahead (as "a few days ago"). "Next time" and the seasons name no window. `parse_time` does not
clip these to now: they are meant to lie ahead.
"""

from __future__ import annotations

import re
from datetime import timedelta

from dateutil.relativedelta import relativedelta

from .temporal_calendar import _MONTH_FULL, Ahead, _calendar_unit, _Ctx, _days, _month_num, _Span, _span_months
from .temporal_points import _NUMW, _WD_FULL, _around, _count, _shift

__all__ = ["FUTURE_PATTERN", "h_future"]

_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_LATER = r"(?:days?|weeks?|weekend|months?|years?|time|spring|summer|fall|autumn|winter)"
#: The rule's pattern (`temporal._RULE_TABLE`'s "future" row): every form is matched and masked,
#: whether or not it gives a window ("next time", "next summer" give none).
FUTURE_PATTERN = (
    r"(?P<tomorrow>(?:the\s+)?day\s+after\s+tomorrow|tomorrow)"
    rf"|(?P<run>(?:in|over|during|within)\s+)?(?:the\s+)?(?:this\s+)?(?P<lead>next|coming|upcoming)\s+"
    rf"(?:(?P<n>{_NUMW}|few|several)\s+)?(?P<u>{_LATER}|{_WD_FULL}|{_MONTH_FULL})(?!\w)"
    rf"|in\s+(?P<in_n>{_NUMW}|(?:a\s+)?few|several)\s+(?P<in_u>days?|weeks?|months?|years?)(?!\w)(?!\s+ago)"
    r"|later\s+this\s+(?P<later>week|month|year)"
)


def h_future(m: re.Match[str], c: _Ctx) -> _Span | None:
    """The window ahead that the match names, or None ("next time", a season)."""
    span = _ahead(m, c)
    return Ahead(span) if span is not None else None


def _ahead(m: re.Match[str], c: _Ctx) -> _Span | None:
    today = c.now.date()
    if m.group("tomorrow"):
        d = today + timedelta(days=2 if "after" in m.group("tomorrow").lower() else 1)
        return _days(c, d, d)
    if m.group("later"):  # "later this week": from now to the end of the calendar unit
        return c.now, _calendar_unit(c, m.group("later").lower(), 0)[1]
    if m.group("in_u"):
        unit, n = m.group("in_u").lower().rstrip("s"), m.group("in_n").lower()
        if "few" in n or "several" in n:
            return c.now + _shift(unit, 1), c.now + _shift(unit, 3)
        return _around(c, c.now + _shift(unit, _count(n)), unit)
    word, n = m.group("u").lower(), m.group("n")
    unit = word[:-1] if word.endswith("s") else word
    if re.fullmatch(_WD_FULL, word):
        d = today + timedelta(days=(_WEEKDAYS.index(word[:3]) - today.weekday() - 1) % 7 + 1)
        return _days(c, d, d)
    if re.fullmatch(_MONTH_FULL, word):  # "next May": the first May after this month
        first = today.replace(day=1) + relativedelta(months=(_month_num(word) - today.month - 1) % 12 + 1)
        return _span_months(c, first, 1)
    if unit not in ("day", "week", "month", "year", "weekend"):
        return None  # "next time", "next summer"
    coming = m.group("lead").lower() != "next"  # "the coming week": from now, not next Monday
    if unit == "weekend":
        sat = (today + timedelta(days=(5 - today.weekday() - 1) % 7 + 1) if coming
               else _calendar_unit(c, "week", -1)[0].date() + timedelta(days=5))
        return _days(c, sat, sat + timedelta(days=1))
    if n is not None or word.endswith("s") or m.group("run") or coming:  # "the next 3 days", "over the next week"
        few = (n is None and word.endswith("s")) or (n is not None and n.lower() in ("few", "several"))
        return c.now, c.now + _shift(unit, 3 if few else _count(n) if n is not None else 1)
    if unit == "day":  # "the next day" is told of another day ("what did we do the next day?")
        return None
    return _calendar_unit(c, unit, -1)

