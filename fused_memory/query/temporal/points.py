"""Single points in time for the temporal parser: the point rules and their handlers.

Split from `parser.py`, which holds the range rules, the rule table's order and `parse_time`:
a point ("March 15th", "last Tuesday", "3 days ago") is read here, both on its own and as the
endpoint of a range ("between March 3 and March 10"). Every handler takes a regex match and the
query's context (`Ctx`: now, the last session end, the fuzzy-window settings) and returns a
(start, end) span in now's zone, or None when the text turned out not to be a time ("this may be
wrong", "Black Friday", "step 3 may fail").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime, timedelta
from functools import lru_cache

from dateutil.relativedelta import relativedelta

from .calendar import (
    Ahead,
    Ctx,
    Span,
    ahead_if,
    around,
    at,
    calendar_unit,
    days,
    month_num,
    recent,
    shift,
    span_months,
    upcoming,
)
from .quarters import h_quarter
from .vocab import (
    ICASE,
    MONTH_ANY,
    MONTH_FULL,
    NOT_A_UNIT,
    NUMW,
    ORDINALS,
    UNIT,
    UNIT_F,
    US,
    WD_ABBR,
    WD_FULL,
    WEEKDAYS,
    YEAR,
    count_of,
    leading_int,
    unmasked,
)

__all__ = ["SESSION", "RANGE", "REL", "FUZZY", "ABS", "Handler", "POINTS", "POINT", "point", "h_month", "h_year",
           "MODAL_FOLLOWER", "DEC_FOLLOWER", "DAY_OF_MONTH", "h_day_of_month"]

_DAY = r"(?:3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?(?!\w)"
#: "two weeks back" is "two weeks ago"; "3 days back to back", "back-end", "back and forth" are not.
_BACK = r"back(?![-\s]*(?:to[-\s]+back|end|and\s+forth)\b)"
_SEASONS = {"spring": (3, 3), "summer": (6, 3), "fall": (9, 3), "autumn": (9, 3), "winter": (12, 3)}


@lru_cache(maxsize=1024)
def _dateparser_date(span: str, base: datetime) -> date | None:
    """dateparser on one candidate span, never on the whole query; cached because it is slow.
    Dotted dates are day-first ("12.05.2024" is 12 May, as written where dots are used), slashed
    ones month-first (dateparser's English default)."""
    try:
        import dateparser
        got = dateparser.parse(span, languages=["en"], settings={
            "RELATIVE_BASE": base, "PREFER_DATES_FROM": "past", "RETURN_AS_TIMEZONE_AWARE": False,
            "DATE_ORDER": "DMY" if "." in span else "MDY"})
    except Exception:  # a dateparser bug must not fail the query: no window instead
        return None
    return got.date() if got is not None else None


#: "may" is a month or the modal verb. After "in", "during", "mid", "early", "of", "last" ("in May
#: Caroline went", "the 5th of May", "last May there was a fire") it is the month unless a verb or
#: adverb the modal takes follows
#: (`MODAL_FOLLOWER`: "checked in may be stale", "waking up early may help"). Anywhere else ("this
#: may", "step 3 may", "the 3rd may") it is the month only before what a verb cannot be
#: (`_MONTH_FOLLOWER`: the end, punctuation, a number, a pronoun, a preposition, a capitalized name):
#: "this May I went", "this May?", "on 3 May Caroline gave a talk"; not "this may fix the bug".
MODAL_FOLLOWER = re.compile(
    r"\s+(?:be|been|not|never|have|has|had|take|takes|need|help|seem|sound|look|work|fail|cause|want|also|well"
    r"|still|just|only|even|already|require|affect|change|happen|come|go|get|make|lead|result|contain|include"
    r"|break|apply|depend|vary|differ|mean|explain|occur|cost|prove|return|show|use|add|lose|find|become|feel"
    r"|hurt|delay|slow|crash|stop|start|run|save|remove|turn|end|matter|appear|play|give|keep|let|see|bring"
    r"|put|ask|try|call|tell|say|know|think|hold|allow|exist|enable|trigger|reduce|increase|improve|impact"
    r"|create|produce|involve|suggest|indicate|contribute|benefit|interest|surprise|wish|like|choose|fix"
    r"|decide|consider|offer|provide|possibly|actually|really|sometimes|eventually|yet|therefore|thus|simply"
    r"|likely|probably|potentially|all|partly|solve|conflict|relate|lower|raise)\b", ICASE)
_MONTH_FOLLOWER = re.compile(r"\s*(?:$|[^\w\s]|\d)|\s+(?:and|or|to|through|thru|until|till|when|while|during|in|at"
                             r"|on|of|with|for|before|after|about|around|back|we|i|you|he|she|they|it|me|us|him|them"
                             r"|my|our|your|his|her|their|its|the|a|an|did|was|were|is|are|had|has|last|this|next"
                             r"|every|each|many|most|some|so|but|then|that|which|there|here|everything|everyone"
                             r"|nothing|something|someone)\b", ICASE)
_NAME_NEXT = re.compile(r"\s+[A-Z]")  # case-sensitive: "this May Caroline..."
_STRONG_MONTH = re.compile(r"\b(?:in|during|throughout|early|late|mid|of|last)[\s-]+(?:the\s+month\s+of\s+)?$", ICASE)
#: "dec" is also a decimal ("4 dec places").
DEC_FOLLOWER = re.compile(r"\s+(?:places?|digits?|points?|numbers?)\b", ICASE)


def _month_word_ok(m: re.Match[str]) -> bool:
    """False where a "may" is the verb ("this may be wrong", "step 3 may fail") or "dec" a decimal."""
    word = m.group("mon").lower().rstrip(".")
    if word not in ("may", "dec") or m.end("mon") != m.end():  # "May 3", "Aug 15th": a day follows
        return True
    text = unmasked(m)
    if word == "dec":
        return DEC_FOLLOWER.match(text, m.end()) is None
    if MODAL_FOLLOWER.match(text, m.end()):
        return False
    before = max(0, m.start("mon") - 32)  # the longest strong lead-in ("throughout the month of ") fits
    return bool(_STRONG_MONTH.search(text, before, m.start("mon")) or _MONTH_FOLLOWER.match(text, m.end())
                or _NAME_NEXT.match(text, m.end()))


# ------------------------------------------------------------------ handlers: match -> (start, end) or None
def _h_day(m: re.Match[str], c: Ctx) -> Span | None:
    mon_s, y, day = m.group("mon"), m.group("y"), leading_int(m.group("d"))
    if not mon_s.isdigit() and not y and not _month_word_ok(m):
        return None
    mon = int(mon_s) if mon_s.isdigit() else month_num(mon_s)
    if y:
        try:
            dated = date(int(y), mon, day)
        except ValueError:
            return None
        return days(c, dated, dated)
    try:
        d = _occurrence(c, lambda step: _nth(c, mon, day, step))  # no year: by the tense (`Ctx.coming`)
    except ValueError:
        return None
    return ahead_if(c, days(c, d, d)) if d is not None else None


def _occurrence(c: Ctx, nth: Callable[[int], date | None]) -> date | None:
    """The occurrence of a yearless date the tense asks for (`Ctx.coming`): the coming one (step
    1), the last one (step -1), or with no tense to tell, whichever is nearer today (the last one
    on a tie)."""
    if c.coming is not None:
        return nth(1 if c.coming else -1)
    last, coming = nth(-1), nth(1)
    if last is None or coming is None:
        return last or coming
    today = c.now.date()
    return coming if (coming - today) < (today - last) else last


def _nth(c: Ctx, month: int, day: int, step: int) -> date | None:
    """The coming (step 1: today's too) or last (step -1: today's too) month/day; a day the month
    never has (February 30) is no date."""
    date(2000, month, day)  # ValueError for a day the month never has (2000 was a leap year)
    return upcoming(c, month, day) if step > 0 else recent(c, month, day)


def h_day_of_month(m: re.Match[str], c: Ctx) -> Span | None:
    """"on the 14th", "for the 3rd": that day of the coming month (this one's when it is still to
    come), or told in the past, of the last one that held it; a day no month reaches (the 32nd) or
    that the months around lack (the 31st of February) is no date."""
    day = leading_int(m.group("d"))
    today = c.now.date()
    first = today.replace(day=1)

    def nth(step: int) -> date | None:
        for n in range(0, 13):
            month = first + relativedelta(months=step * n)
            try:
                d = month.replace(day=day)
            except ValueError:
                continue
            if (d >= today) if step > 0 else (d <= today):
                return d
        return None

    d = _occurrence(c, nth)
    return ahead_if(c, days(c, d, d)) if d is not None else None


def _h_numeric(m: re.Match[str], c: Ctx) -> Span | None:
    text = m.group(0)
    d = _dateparser_date(text, datetime.combine(c.now.date(), datetime.min.time()))
    if d is not None and re.search(r"[/.]\d\d$", text):
        # "5/20/24" said in May 2024 is this year's (to come: no window), not 1924 as dateparser's
        # past preference made it; "1/1/60" is 1960: the latest century up to a year from now
        yy = d.year % 100
        year = max(y for y in (1900 + yy, 2000 + yy, 2100 + yy) if y <= c.now.year + 1 or y == 1900 + yy)
        try:
            d = d.replace(year=year)
        except ValueError:  # Feb 29 of a century's non-leap year
            return None
    return days(c, d, d) if d and 1900 <= d.year <= 2199 else None


def h_month(m: re.Match[str], c: Ctx) -> Span | None:
    """"in May", "last March", "May 2023": the whole month (the latest begun, or the one to come when
    the query asks of plans); None where "may" is the verb."""
    g = m.groupdict()
    if not g.get("y") and not _month_word_ok(m):
        return None
    mon = month_num(g["mon"])
    if g.get("y"):
        return span_months(c, date(int(g["y"]), mon, 1), 1)
    if c.plans and (g.get("mod") or "").lower() != "last":  # "what's planned in April?": the April to come
        d = upcoming(c, mon)
        return ahead_if(c, span_months(c, d, 1)) if d else None
    d = recent(c, mon)
    if d is not None and (g.get("mod") or "").lower() == "last" and (d.year, mon) == (c.now.year, c.now.month):
        d = d.replace(year=d.year - 1)  # "last May", said in May, is a year ago
    return span_months(c, d.replace(day=1), 1) if d else None


def h_year(m: re.Match[str], c: Ctx) -> Span | None:
    """"in 2022": the whole year."""
    return days(c, date(int(m.group("y")), 1, 1), date(int(m.group("y")), 12, 31))


def _h_weekday(m: re.Match[str], c: Ctx) -> Span | None:
    """"last Tuesday" on a Wednesday is yesterday (as dateparser reads it); on a Tuesday, a week ago.
    "this Friday" is the Friday of this calendar week (Monday first), ahead or behind, unless the
    query is told in the past ("what did we do this Sunday?" on a Monday is yesterday).
    A weekday in a name is no day: "Black Friday", "Sunday school", "Friday the 13th", "on sun exposure"."""
    mod = (m.group("mod") or "").lower()
    if mod == "on" and m.group("wd").lower() == "sun":  # "notes on sun exposure"
        return None
    text = unmasked(m)
    if not mod and (_WEEKDAY_NAME_BEFORE.search(text, max(0, m.start() - 12), m.start())
                    or _HOLIDAY.search(text, max(0, m.start() - 6), m.end())
                    or _WEEKDAY_NAME_AFTER.match(text, m.end())):
        return None  # "Black Friday", "Sunday school"; "on Friday sales were up" is the day
    wd = WEEKDAYS.index(m.group("wd").lower()[:3])
    if mod in ("", "on") and (c.plans or c.coming):  # "what do I have on Tuesday?": the Tuesday to come (today's too)
        d = c.now.date() + timedelta(days=(wd - c.now.weekday()) % 7)
        return Ahead(days(c, d, d))
    if mod == "this" and not c.past:  # this calendar week's: "what's on this Friday?" on a Thursday is tomorrow
        d = c.now.date() + timedelta(days=wd - c.now.weekday())
        return Ahead(days(c, d, d)) if d > c.now.date() else days(c, d, d)
    delta = (c.now.weekday() - wd) % 7
    if delta == 0 and mod in ("last", "past"):
        delta = 7
    d = c.now.date() - timedelta(days=delta)
    return days(c, d, d)


_WEEKDAY_NAME_BEFORE = re.compile(r"\b(?:[Bb]lack|[Cc]yber|[Aa]sh|[Pp]alm|[Hh]oly|[Ee]aster|[Mm]aundy|Good|Super)\s+$")
#: Holidays whatever the case ("what did we do on good friday"); "a Good day" needs the capital.
_HOLIDAY = re.compile(r"\b(?:good\s+friday|super\s+tuesday)\b", ICASE)
_WEEKDAY_NAME_AFTER = re.compile(r"\s+(?:school|the\s+13th|deals?|sales?|services?|mass|market|prayers?)\b", ICASE)


def _h_weekend(m: re.Match[str], c: Ctx) -> Span | None:
    """"this weekend" asked of plans on a weekday is the coming one; told in the past, or "last
    weekend", the one before (as it always was)."""
    mod = (m.group("mod") or "").lower()
    if mod == "this" and not c.past and c.now.weekday() < 5:
        sat = c.now.date() + timedelta(days=5 - c.now.weekday())
        return Ahead(days(c, sat, sat + timedelta(days=1)))
    sat = c.now.date() - timedelta(days=(c.now.weekday() - 5) % 7)
    if mod in ("last", "past") and c.now.weekday() >= 5:
        sat -= timedelta(days=7)
    return days(c, sat, sat + timedelta(days=1))


def _h_season(m: re.Match[str], c: Ctx) -> Span | None:
    """Northern seasons; winter YYYY is Dec YYYY-1 .. Feb YYYY. "last summer" is the last one ended."""
    first_month, length = _SEASONS[m.group("s").lower()]
    mod = (m.group("mod") or "").lower()
    if m.group("y"):
        return span_months(c, date(int(m.group("y")) - (first_month == 12), first_month, 1), length)
    start = recent(c, first_month)
    if not mod or start is None:
        return None  # "summer dress": a bare season is no time reference
    if mod in ("last", "past") and start + relativedelta(months=length, days=-1) >= c.now.date():
        start = start.replace(year=start.year - 1)
    current = start + relativedelta(months=length) > c.now.date()
    if mod == "this" and not current and (start.year != c.now.year or first_month == 12):
        return None  # "this summer", said in May, is still to come
    return span_months(c, start, length)


def _h_unit_part(m: re.Match[str], c: Ctx) -> Span | None:
    """"the end of last month", "the start of this year", "last quarter": the whole calendar unit, as
    "early March" is all of March: a part of a unit is too vague to cut finer, and a window a little
    wide only costs rank, while one that misses the day loses the memory. "over the last quarter"
    and "the past quarter" are a duration, as "the past month" is: the rolling three months."""
    which = (m.groupdict().get("which") or "this").lower()
    if m.groupdict().get("over") or which == "past":
        return c.now - relativedelta(months=3), c.now
    return calendar_unit(c, m.group("u").lower(), 1 if which in ("last", "previous") else 0)


def _h_week_of(m: re.Match[str], c: Ctx) -> Span | None:
    """"the first week of March" -> March 1-7; "the last week of April" -> its last seven days."""
    if not m.group("y") and not _month_word_ok(m):
        return None  # "the first week of may be hard"
    mon, nth = month_num(m.group("mon")), m.group("nth").lower()
    first = date(int(m.group("y")), mon, 1) if m.group("y") else recent(c, mon)
    if first is None:
        return None

    def week(first: date) -> tuple[date, date]:
        if nth == "last":
            last = first + relativedelta(months=1, days=-1)
            return last - timedelta(days=6), last
        start = first + timedelta(days=7 * (ORDINALS[nth] - 1))
        return start, start + timedelta(days=6)

    start, end = week(first)
    if not m.group("y") and start > c.now.date():  # said on March 5, "the second week of March" is last year's
        start, end = week(first.replace(year=first.year - 1))
    return days(c, start, end)


def _h_this_unit(m: re.Match[str], c: Ctx) -> Span | None:
    """"this week": the week so far; asked of plans ("what do I have this week?", no past tense,
    no "earlier"), the whole calendar week, its days ahead included."""
    unit = m.group("u").lower()
    if unit != "day" and not c.past and not m.group().lower().startswith("earlier"):
        return Ahead(calendar_unit(c, unit, 0))
    t = c.now.date()
    start = {"day": t, "week": t - timedelta(days=t.weekday()), "month": t.replace(day=1),
             "year": t.replace(month=1, day=1)}[unit]
    return at(c, start), c.now


#: The parts of a day "this morning", "this afternoon", "this evening" and "tonight" name: (first hour,
#: hour after the last).
_PARTS = {"morning": (0, 12), "afternoon": (12, 18), "evening": (17, 24), "tonight": (18, 24)}


def _h_today(m: re.Match[str], c: Ctx) -> Span | None:
    """Today so far; asked of plans ("what do I have today?"), the whole day. "This morning", "this
    afternoon", "this evening" and "tonight" are that part of today ("anything I told you this
    morning?" asked at 7 pm is not the afternoon's)."""
    phrase = m.group().lower().split()[-1]
    day = at(c, c.now.date())
    if phrase in _PARTS:
        first, last = _PARTS[phrase]
        span = (day + timedelta(hours=first), day + timedelta(hours=last) - US)
        return Ahead(span) if span[1] > c.now and not c.past else span
    if c.past or m.group().lower().startswith("earlier"):
        return day, c.now
    return Ahead(days(c, c.now.date(), c.now.date()))


def _h_yesterday(m: re.Match[str], c: Ctx) -> Span | None:
    """Yesterday, the whole day; "last night" its evening and the night up to this morning."""
    y = c.now.date() - timedelta(days=1)
    if m.group().lower().startswith("last"):
        evening = at(c, y) + timedelta(hours=17)
        return evening, min(c.now, evening + timedelta(hours=13))
    return days(c, y, y)


def _h_weekday_date(m: re.Match[str], c: Ctx) -> Span | None:
    """"Saturday Jan 31", "Sat 17 Jan", "Saturday the 4th": a date with its weekday, which says the
    year (or the month) the date no year names: the nearest occurrence that falls on that weekday,
    else the date as the tense reads it. No such date (the 30th of February): None."""
    wd = WEEKDAYS.index(m.group("wd").lower()[:3])
    day = leading_int(m.group("d") or m.group("d2") or m.group("d3"))
    mon_word = m.group("mon") or m.group("mon2")
    today = c.now.date()
    if mon_word:
        mon = month_num(mon_word)
        options = []
        for y in (today.year - 1, today.year, today.year + 1):
            try:
                options.append(date(y, mon, day))
            except ValueError:
                continue
    else:
        first = today.replace(day=1)
        options = []
        for n in range(-6, 7):
            try:
                options.append((first + relativedelta(months=n)).replace(day=day))
            except ValueError:
                continue
    fits = [d for d in options if d.weekday() == wd]
    if not fits:
        return None
    d = min(fits, key=lambda d: (abs((d - today).days), d < today))
    return ahead_if(c, days(c, d, d))


def _h_few_ago(m: re.Match[str], c: Ctx) -> Span | None:
    unit = m.group("u").lower()
    if unit == "month":  # configurable per namespace, default [now-90d, now-30d]
        return c.now - timedelta(days=c.few_months[0]), c.now - timedelta(days=c.few_months[1])
    return c.now - shift(unit, 3), c.now - shift(unit, 1)


def _h_n_ago(m: re.Match[str], c: Ctx) -> Span | None:
    unit = m.group("u").lower()
    return around(c, c.now - shift(unit, count_of(m.group("n"))), unit)


def _h_hours(m: re.Match[str], c: Ctx) -> Span | None:
    """"in the last 24 hours" -> [now-24h, now]; "3 hours ago" -> that hour, half an hour each side."""
    ago = m.group("ago")
    if ago is not None and re.search(r"few|several", ago, ICASE):  # as "a few days ago": [now-3u, now-1u]
        return c.now - timedelta(hours=3), c.now - timedelta(hours=1)
    if ago is not None:
        target = c.now - timedelta(hours=min(count_of(ago), 48_000))
        return target - timedelta(minutes=30), target + timedelta(minutes=30)
    return c.now - timedelta(hours=min(count_of(m.group("n")), 48_000)), c.now


def _h_past_n(m: re.Match[str], c: Ctx) -> Span | None:
    """"last week" -> [now-7d, now] (rolling, as the issue specifies), "the past 3 months" -> [now-3mo, now]."""
    return c.now - shift(m.group("u").lower(), count_of(m.group("n"))), c.now


#: A rule's handler: its match and the query's context -> a span, or None when the text is no time.
Handler = Callable[[re.Match[str], Ctx], "Span | None"]
#: Tiers: when a query holds several expressions the lowest tier wins, then the earlier rule.
#: Specific beats vague: "recently ... in May 2022" means May 2022. ABS = an absolute date: tier 2
#: with an explicit year, else 4.
SESSION, RANGE, REL, FUZZY, ABS = 0, 1, 3, 5, -1

_YESTERDAY = r"yesterday|last\s+night"
#: "in the past 3", "over the last", "the previous few": the lead-in of a rolling window (unit follows).
_PAST_N = rf"(?:(?:in|over|during|within)\s+)?(?:the\s+)?(?:past|last|previous)\s+(?:(?P<n>{NUMW}|few|several)\s+)?"

#: "the end of", "at the start of the": a part of a calendar unit (read as the whole unit).
_PART_OF = r"(?:the\s+)?(?:end|start|beginning|middle)\s+of\s+(?:the\s+)?"
#: What may not follow a unit for it to be one: "the month before last", "the year 2023", "the
#: quarter of the game" are other phrases.
_UNIT_END = r"(?!\s+(?:of|before|after)\b)(?!\s*,?\s*\d)"

#: One point in time each: (name, tier, pattern, handler). Used on their own (after the range rules)
#: and as range endpoints. Separate entries, not one alternation: `re` forbids repeated group names.
POINTS: tuple[tuple[str, int, str, Handler], ...] = (
    # calendar units first: "the end of last month" is not the rolling "last month" inside it
    ("unit_part", REL, rf"{_PART_OF}(?P<which>last|previous|this|current)\s+(?P<u>week|month|quarter|year){_UNIT_END}",
     _h_unit_part),
    # "the end of the month", with no "last" or "this": vaguer than any date, so a date in the query wins
    ("unit_part_this", FUZZY, rf"{_PART_OF}(?P<u>week|month|quarter|year){_UNIT_END}", _h_unit_part),
    ("quarter_rel", REL, rf"(?P<over>(?:over|within|during)\s+the\s+)?(?P<which>last|previous|past|this|current)"
                         rf"\s+(?P<u>quarter){_UNIT_END}(?!\s+(?:miles?|notes?|inch(?:es)?|hours?|pounds?|cents?)\b)",
     _h_unit_part),
    ("week_of", ABS, rf"(?:the\s+)?(?P<nth>first|second|third|fourth|last|1st|2nd|3rd|4th)\s+week\s+of\s+"
                     rf"(?:the\s+month\s+of\s+)?(?P<mon>{MONTH_ANY})(?!\w)(?:\s*,?\s*(?P<y>{YEAR}))?", _h_week_of),
    ("few_ago", REL, rf"(?:a\s+)?(?:few|several)\s+{UNIT}\s+(?:ago|{_BACK})", _h_few_ago),
    ("n_ago", REL, rf"(?P<n>{NUMW})\s+{UNIT_F}\s+(?:ago|{_BACK})", _h_n_ago),
    ("hours", REL, rf"{_PAST_N}hours?(?!\s+of\b)|(?<!half\s)(?P<ago>{NUMW}|(?:a\s+)?few|several)\s+hours?\s+ago",
     _h_hours),
    ("half_hour", REL, r"half\s+an\s+hour\s+ago", lambda m, c: (c.now - timedelta(hours=1), c.now)),
    ("past_n", REL, rf"{_PAST_N}{UNIT_F}(?!\s+of\b)", _h_past_n),
    # "these days" and "nowadays" ask about the current state ("where am I volunteering these days?"),
    # not what happened in a window: read and masked, no window (the versions order the answer)
    ("nowadays", FUZZY, r"these\s+days|nowadays", lambda m, c: None),
    ("recently", FUZZY, r"recently|lately|of\s+late|in\s+recent\s+(?:days|weeks|months|times)",
     lambda m, c: (c.now - timedelta(days=c.recent_days), c.now)),
    ("yesterday", REL, _YESTERDAY, _h_yesterday),  # all of yesterday, not now-24h
    ("today", REL, r"earlier\s+today|today|tonight|this\s+(?:morning|afternoon|evening)", _h_today),
    ("this_unit", REL, rf"(?:earlier\s+)?this\s+{UNIT}", _h_this_unit),
    ("weekend", REL, r"(?:(?P<mod>last|this|past)\s+|over\s+the\s+)weekend", _h_weekend),
    ("weekday_date", ABS, rf"(?P<wd>{WD_FULL}|{WD_ABBR})\s*,?\s+(?:(?:the\s+)?(?P<d>{_DAY})(?:\s+of)?\s+"
                          rf"(?P<mon>{MONTH_ANY})"
                          rf"(?!\w)|(?P<mon2>{MONTH_ANY})\s+(?P<d2>{_DAY})|the\s+(?P<d3>{_DAY}))(?!\s*,?\s*(?:19|20)\d\d)"
                          r"(?!\s+(?:movies?|films?|franchise|marathon|remake|sequel|part)\b)",
     _h_weekday_date),
    ("weekday", REL, rf"(?:(?P<mod>last|this|past|on)\s+)?(?P<wd>{WD_FULL})", _h_weekday),
    ("weekday_abbr", REL, rf"(?P<mod>last|this|on)\s+(?P<wd>{WD_ABBR})", _h_weekday),
    ("season", ABS, rf"(?:(?P<mod>last|this|past|in\s+the|during\s+the|over\s+the)\s+)?"
                    rf"(?P<s>spring|summer|fall|autumn|winter)(?:\s+(?:of\s+)?(?P<y>{YEAR}))?", _h_season),
    ("quarter", ABS, rf"(?:q(?P<q>[1-4])|the\s+(?P<qo>first|second|third|fourth|1st|2nd|3rd|4th"
                     r"|last(?=\s+quarter\s+(?:of\s+)?(?:19|2[01])\d\d))\s+quarter)"
                     rf"(?:\s+(?:of\s+)?(?P<y>{YEAR}))?", h_quarter),
    ("iso_date", ABS, r"(?P<y>\d{4})[-/](?P<mon>\d{1,2})[-/](?P<d>\d{1,2})(?!\d)"
                      r"(?:[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:z|[+-]\d\d:?\d\d)?(?!\w))?", _h_day),
    ("numeric_date", ABS, r"(?<![\d.])(?:\d{1,2}/\d{1,2}/(?:\d{4}|\d{2})|\d{1,2}\.\d{1,2}\.\d{4})(?![\d.])",
     _h_numeric),
    ("month_day", ABS, rf"(?P<mon>{MONTH_ANY})\s+(?P<d>{_DAY}){NOT_A_UNIT}(?:(?:\s*,\s*|\s+)(?P<y>{YEAR}))?", _h_day),
    ("day_month", ABS, rf"(?:the\s+)?(?P<d>{_DAY})(?:\s+of)?\s+(?P<mon>{MONTH_ANY})(?!\w)"
                       rf"(?:\s*,?\s*(?P<y>{YEAR}))?", _h_day),
    ("month_year", ABS, rf"(?P<mon>{MONTH_ANY})\s*,?\s+(?P<y>{YEAR})", h_month),
)
#: "on the 14th", "for the 3rd": a day of the month alone, after a word that puts a date there (not
#: "the 14th century", "her 3rd birthday", "the 2nd floor"). Not a range endpoint, and after the
#: points, so "the 14th of June" is a day of June (`day_month`).
DAY_OF_MONTH = (r"(?:on|for|by|until|till|before|after|from|is|was|due)\s+the\s+"
                r"(?P<d>3[01](?:st|th)|[12]\d(?:st|nd|rd|th)"
                r"|0?[1-9](?:st|nd|rd|th))(?!\w)(?!\s*(?:of\b|century|centuries|floor|birthday|anniversary|time|place"
                r"|grade|hole|round|minute|inning|edition|amendment|generation|percentile|row|street|avenue|st\b))")

#: Too weak alone (a bare month, a lone number): accepted only as range endpoints ("since March").
_ENDPOINT_ONLY = ((re.compile(rf"(?P<mon>{MONTH_FULL})", ICASE), h_month), (re.compile(rf"(?P<y>{YEAR})"), h_year))
#: Alone, "yesterday" runs up to now (a late-night memory may be stamped today); as an endpoint it is
#: the day itself: "until yesterday" ends at yesterday's midnight, not now.
_ENDPOINT_FIRST = ((re.compile(_YESTERDAY, ICASE),
                    lambda m, c: days(c, c.now.date() - timedelta(days=1), c.now.date() - timedelta(days=1))),
                   (re.compile(r"now|the\s+present", ICASE), lambda m, c: (c.now, c.now)))  # "between May and now"
_POINT_FULL = _ENDPOINT_FIRST + tuple((re.compile(p, ICASE), h) for _, _, p, h in POINTS) + _ENDPOINT_ONLY
#: Any one point, without its groups: what a range rule captures as an endpoint (read by `point`).
POINT = "(?:" + "|".join(re.sub(r"\(\?P<\w+>", "(?:", p) for _, _, p, _ in POINTS) + f"|{MONTH_FULL}|{YEAR})"


def point(span: str, c: Ctx) -> Span | None:
    """Resolve one range endpoint (the span a range rule captured)."""
    span = " ".join(span.split())
    for rx, handler in _POINT_FULL:
        m = rx.fullmatch(span)
        if m:
            return handler(m, c)
    return None
