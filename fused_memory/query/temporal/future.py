"""Windows ahead of now: "tomorrow", "next week", "in 3 days", "later this month", "by next Friday".

An agent's memories hold plans as well as history: a memory stored with `event_at` on the 3rd of
next month ("dentist at 10:00") is what "what do I have next week?" asks for: these phrases give a
window ahead (masked, as every matched phrase is, so no other rule misreads "next May" as a past
May). Readings mirror the past side's: "next Friday" is the
first Friday after today (as "last Tuesday" is the latest Tuesday before it, dateparser's reading
on both sides); "next week / month / year" are the next calendar units (Monday first), "next
weekend" the weekend of next week; "the coming week" and "the next 3 days" run from now, "the
coming weekend" is the first one after today; "in 3 days" is that day, "in 2 weeks" that week with
half a week's slack each side (as "2 weeks ago"); "in a few days" 1-3 days ahead (as "a few days
ago"); "by / until / before next Friday" runs from now to its end. `parse_time` keeps these whole
instead of clipping them to now (`Ahead`), and ranks them below any past expression in the same
query ("what did I say yesterday about next week's trip?" asks about yesterday).

Stories use the same words, so some readings need the query not to be told in the past tense
(`Ctx.past`, from `tense.past_tense`): "we built it in 3 days" is a duration, "the next week he quit"
and "in the next three years the company grew" are another time's "next". "After next week", "a week
from tomorrow" and "next week after the launch" are relative to the phrase: no window (still
masked). "Next time" and the seasons name none.
"""

from __future__ import annotations

import re
from datetime import timedelta

from dateutil.relativedelta import relativedelta

from .calendar import Ahead, Ctx, Span, around, calendar_unit, days, month_num, shift, span_months
from .vocab import ICASE, MONTH_FULL, NUMW, WD_ABBR, WD_FULL, WEEKDAYS, count_of, unmasked

__all__ = ["FUTURE_PATTERN", "FUTURE_TAG_PATTERN", "h_future"]

_LATER = r"(?:days?|weeks?|weekend|months?|years?|hours?|time|spring|summer|fall|autumn|winter)"
_SOON = r"|(?P<soon>coming\s+up(?!\s+with)|upcoming(?=\s*(?:[?.!,]|$)))"
#: The rule's pattern (`parser._RULE_TABLE`'s "future" row): every form is matched and masked,
#: whether or not it gives a window ("next time", "next summer" give none).
FUTURE_PATTERN = (
    r"(?P<tomorrow>(?:the\s+)?day\s+after\s+tomorrow|tomorrow)"
    rf"|(?P<run>(?:in|over|during|within)\s+)?(?P<the>(?:the|this)\s+)?(?:this\s+)?(?P<lead>next|coming|upcoming)\s+"
    rf"(?:(?P<n>{NUMW}|few|several)\s+)?(?P<u>{_LATER}|{WD_FULL}|{WD_ABBR}|{MONTH_FULL})(?!\w)"
    rf"|in\s+(?P<in_n>{NUMW}|(?:a\s+)?few|several)\s+(?P<in_u>hours?|days?|weeks?|months?|years?)(?!\w)(?!\s+ago)"
    r"|later\s+(?:this\s+(?P<later>week|month|year)|(?P<today>today|tonight))"
    r"|(?:for\s+)?the\s+rest\s+of\s+(?:the|this)\s+(?P<rest>week|month|year)"
    + _SOON
)
#: The same, less the open-ended "coming up": a memory that says "any trips coming up?" asks about a
#: time and states none, so ingest's time tag (`cues.mentions_time`) does not read it.
FUTURE_TAG_PATTERN = FUTURE_PATTERN[:-len(_SOON)]

#: Before the phrase: it ends a window from now ("by next Friday", "between now and next Friday").
_UNTIL = re.compile(r"(?:\b(?:by|until|till|(?<!day\s)before|through|thru|up\s+to)|\bbetween\s+now\s+and)\s+$", ICASE)
#: Before or after the phrase: the phrase is an anchor of another time ("after next week", "a week
#: from tomorrow", "next week after the launch"), which these rules do not compute.
_ANCHOR_BEFORE = re.compile(r"\b(?:after|since|from|than|to|of|and|following)\s+$", ICASE)
_ANCHOR_AFTER = re.compile(r"\s*(?:from|after|before|ago|earlier|later)\b", ICASE)


def h_future(m: re.Match[str], c: Ctx) -> Span | None:
    """The window ahead that the match names, or None (masked all the same)."""
    text = unmasked(m)
    before, after = text[:m.start()], text[m.end():]
    until = _UNTIL.search(before)
    if (_ANCHOR_BEFORE.search(before) and not until) or _ANCHOR_AFTER.match(after):
        return None
    if m.group("tomorrow") and m.group()[0].isupper() and before.strip() and re.match(r"\s+[A-Z]", after):
        return None  # a title: "we watched Tomorrow Never Dies"
    span = _ahead(m, c)
    if span is None:
        return None
    if until:  # "by next Friday", "between now and next Friday": from now to its end
        return Ahead((c.now, span[1]))
    return Ahead(span)


def _ahead(m: re.Match[str], c: Ctx) -> Span | None:
    today = c.now.date()
    if m.group("tomorrow"):
        d = today + timedelta(days=2 if "after" in m.group("tomorrow").lower() else 1)
        return days(c, d, d)
    if m.group("later") or m.group("rest"):  # "later this week", "the rest of the month": now to its end
        return c.now, calendar_unit(c, (m.group("later") or m.group("rest")).lower(), 0)[1]
    if m.group("soon"):  # "what's coming up?": as far ahead as "recently" looks back
        return c.now, c.now + timedelta(days=c.recent_days)
    if m.group("today"):
        return c.now, days(c, today, today)[1]
    if m.group("in_u"):
        if c.past:  # "we built it in 3 days": a duration
            return None
        unit, n = m.group("in_u").lower().rstrip("s"), m.group("in_n").lower()
        if unit == "hour":
            return c.now, c.now + timedelta(hours=3 if "few" in n or "several" in n else min(count_of(n), 48_000))
        if "few" in n or "several" in n:
            return c.now + shift(unit, 1), c.now + shift(unit, 3)
        return around(c, c.now + shift(unit, count_of(n)), unit)
    return _lead(m, c)


def _lead(m: re.Match[str], c: Ctx) -> Span | None:
    """"next ...", "the coming ...", "in the next ...": the forms with a lead word."""
    today = c.now.date()
    word, n, lead = m.group("u").lower().rstrip("."), m.group("n"), m.group("lead").lower()
    the = (m.group("the") or "").strip().lower()
    if lead != "next" and not the:
        return None  # "he was coming Sunday": a verb
    if (c.past and (the == "the" or m.group("run"))
            or the == "the" and not m.group("run") and lead == "next" and n is None):
        return None  # "the next week he quit", "in the next three years the company grew"
    unit = word[:-1] if word.endswith("s") else word
    if re.fullmatch(rf"{WD_FULL}|{WD_ABBR}", word, ICASE):
        d = today + timedelta(days=(WEEKDAYS.index(word[:3]) - today.weekday() - 1) % 7 + 1)
        return days(c, d, d)
    if re.fullmatch(MONTH_FULL, word, ICASE):  # "next May": the first May after this month
        first = today.replace(day=1) + relativedelta(months=(month_num(word) - today.month - 1) % 12 + 1)
        return span_months(c, first, 1)
    if unit not in ("hour", "day", "week", "month", "year", "weekend"):
        return None  # "next time", "next summer"
    coming = lead != "next"  # "the coming week": from now, not next Monday
    if unit == "weekend":
        sat = (today + timedelta(days=(5 - today.weekday() - 1) % 7 + 1) if coming
               else calendar_unit(c, "week", -1)[0].date() + timedelta(days=5))
        return days(c, sat, sat + timedelta(days=1))
    if unit == "hour" or n is not None or word.endswith("s") or m.group("run") or coming:
        few = (n is None and word.endswith("s")) or (n is not None and n.lower() in ("few", "several"))
        count = 3 if few else min(count_of(n), 48_000) if n is not None else 1
        return c.now, c.now + (timedelta(hours=count) if unit == "hour" else shift(unit, count))
    if unit == "day":  # "next day" alone is told of another day
        return None
    return calendar_unit(c, unit, -1)
