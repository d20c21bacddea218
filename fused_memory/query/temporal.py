"""Time expressions in a query -> a closed `TimeWindow`, with `now` always injected.

Why a rule table of our own in front of `dateparser`: dateparser alone is slow (~1 ms per call even
with `languages=['en']`, ~280 ms without) and over-eager ("we" parses as a Wednesday, "port 9077" as
the year 9077, "may" as this month). So our regexes find the candidate spans and decide the
granularity (day, month, quarter, year, range); the regular forms ("March 15th", "7 May 2023",
"2023-05-08") are resolved by the rule itself, and only the irregular numeric forms ("5/8/23") go to
dateparser, always with `languages=['en']`, `RELATIVE_BASE=now` (naive wall time in now's zone; the
zone is reattached) and `PREFER_DATES_FROM='past'`.

Rules run in table order (session, future, ranges, then single points). A span a rule has matched
is masked, even when it gave no window, so a later rule never reinterprets part of it (the "last" of
"since we last talked" is not "last <unit>"). Every window is clipped to `now`; a window wholly in
the future gives None; no window is ever inverted.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta, timezone
from functools import lru_cache

from dateutil.relativedelta import relativedelta

from ..errors import QueryError
from ..types import TimeWindow, require_aware

__all__ = ["TemporalMatch", "parse_time", "RULE_NAMES", "TIME_PATTERNS", "OPEN_START"]

#: Start of open-ended windows ("before June 2023"): far enough back for any agent memory.
OPEN_START = datetime(1900, 1, 1, tzinfo=timezone.utc)

_I = re.IGNORECASE
_US = timedelta(microseconds=1)
_MONTH_FULL = r"(?:january|february|march|april|may|june|july|august|september|october|november|december)"
_MONTH_ANY = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
              r"|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_WD_FULL = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_WD_ABBR = r"(?:mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)\.?"
_DAY = r"(?:3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?(?!\w)"
_YEAR = r"(?<!\d)(?:19\d\d|2[01]\d\d)(?!\d)"
_NUMW = (r"(?:\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
         r"|(?:a\s+)?couple(?:\s+of)?)")
_UNIT = r"(?P<u>day|week|month|year)s?(?!\w)"
_NOT_A_UNIT = (r"(?!\s*(?:ms|s|secs?|seconds?|mins?|minutes?|hours?|hrs?|px|kb|mb|gb|tb|%|x|k|rpm|items?|rows?"
               r"|records?|users?|bytes?|lines?|words?|people|dollars|euros|usd|eur)\b)")
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
_ORDINAL_Q = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_SEASONS = {"spring": (3, 3), "summer": (6, 3), "fall": (9, 3), "autumn": (9, 3), "winter": (12, 3)}

_Span = tuple[datetime, datetime]


@dataclass(frozen=True)
class TemporalMatch:
    """The window a query asks about, the phrase that said so, and the rule that read it."""

    window: TimeWindow
    phrase: str
    rule: str


@dataclass(frozen=True)
class _Ctx:
    now: datetime
    last_session_end: datetime | None
    recent_days: int
    few_months: tuple[int, int]


# ------------------------------------------------------------------ calendar helpers
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


def _month_num(word: str) -> int:
    return _MONTHS.index(word.lower().rstrip(".")[:3]) + 1


def _int(text: str) -> int:
    return int(re.match(r"\d+", text).group())  # type: ignore[union-attr]


def _count(word: str | None) -> int:
    w = " ".join((word or "a").lower().split())
    if "couple" in w or w in ("few", "several"):
        return 2 if "couple" in w else 3
    return int(w) if w.isdigit() else _NUMBERS.get(w, 1)


def _shift(unit: str, n: int) -> relativedelta:
    return relativedelta(**{unit + "s": min(n, 2000 if unit == "day" else 200)})  # huge N: stay in range


@lru_cache(maxsize=1024)
def _dateparser_date(span: str, base: datetime) -> date | None:
    """dateparser on one candidate span, never on the whole query; cached because it is slow."""
    try:
        import dateparser
        got = dateparser.parse(span, languages=["en"], settings={
            "RELATIVE_BASE": base, "PREFER_DATES_FROM": "past", "RETURN_AS_TIMEZONE_AWARE": False})
    except Exception:  # a dateparser bug must not fail the query: no window instead
        return None
    return got.date() if got is not None else None


# ------------------------------------------------------------------ handlers: match -> (start, end) or None
def _h_day(m: re.Match[str], c: _Ctx) -> _Span | None:
    mon_s, y, day = m.group("mon"), m.group("y"), _int(m.group("d"))
    mon = int(mon_s) if mon_s.isdigit() else _month_num(mon_s)
    try:
        d = date(int(y), mon, day) if y else _recent(c, mon, day)
    except ValueError:
        return None
    return _days(c, d, d) if d else None


def _h_numeric(m: re.Match[str], c: _Ctx) -> _Span | None:
    d = _dateparser_date(m.group(0), datetime.combine(c.now.date(), datetime.min.time()))
    return _days(c, d, d) if d and 1900 <= d.year <= 2199 else None


def _h_month(m: re.Match[str], c: _Ctx) -> _Span | None:
    g = m.groupdict()
    mon = _month_num(g["mon"])
    if g.get("y"):
        return _span_months(c, date(int(g["y"]), mon, 1), 1)
    d = _recent(c, mon)
    if d is not None and (g.get("mod") or "").lower() == "last" and (d.year, mon) == (c.now.year, c.now.month):
        d = d.replace(year=d.year - 1)  # "last May", said in May, is a year ago
    return _span_months(c, d.replace(day=1), 1) if d else None


def _h_year(m: re.Match[str], c: _Ctx) -> _Span | None:
    return _days(c, date(int(m.group("y")), 1, 1), date(int(m.group("y")), 12, 31))


def _h_quarter(m: re.Match[str], c: _Ctx) -> _Span | None:
    q = int(m.group("q")) if m.group("q") else _ORDINAL_Q[m.group("qo").lower()]
    y = int(m.group("y")) if m.group("y") else c.now.year - (c.now.month < 3 * q - 2)  # latest begun
    return _span_months(c, date(y, 3 * q - 2, 1), 3)


def _h_weekday(m: re.Match[str], c: _Ctx) -> _Span | None:
    """"last Tuesday" on a Wednesday is yesterday (as dateparser reads it); on a Tuesday, a week ago."""
    delta = (c.now.weekday() - _WEEKDAYS.index(m.group("wd").lower()[:3])) % 7
    if delta == 0 and (m.group("mod") or "").lower() in ("last", "past"):
        delta = 7
    d = c.now.date() - timedelta(days=delta)
    return _days(c, d, d)


def _h_weekend(m: re.Match[str], c: _Ctx) -> _Span | None:
    sat = c.now.date() - timedelta(days=(c.now.weekday() - 5) % 7)
    if (m.group("mod") or "").lower() in ("last", "past") and c.now.weekday() >= 5:
        sat -= timedelta(days=7)
    return _days(c, sat, sat + timedelta(days=1))


def _h_season(m: re.Match[str], c: _Ctx) -> _Span | None:
    """Northern seasons; winter YYYY is Dec YYYY-1 .. Feb YYYY. "last summer" is the last one ended."""
    first_month, length = _SEASONS[m.group("s").lower()]
    mod = (m.group("mod") or "").lower()
    if m.group("y"):
        return _span_months(c, date(int(m.group("y")) - (first_month == 12), first_month, 1), length)
    start = _recent(c, first_month)
    if not mod or start is None:
        return None  # "summer dress": a bare season is no time reference
    if mod in ("last", "past") and start + relativedelta(months=length, days=-1) >= c.now.date():
        start = start.replace(year=start.year - 1)
    current = start + relativedelta(months=length) > c.now.date()
    if mod == "this" and not current and (start.year != c.now.year or first_month == 12):
        return None  # "this summer", said in May, is still to come
    return _span_months(c, start, length)


def _h_this_unit(m: re.Match[str], c: _Ctx) -> _Span | None:
    t = c.now.date()
    start = {"day": t, "week": t - timedelta(days=t.weekday()), "month": t.replace(day=1),
             "year": t.replace(month=1, day=1)}[m.group("u").lower()]
    return _at(c, start), c.now


def _h_few_ago(m: re.Match[str], c: _Ctx) -> _Span | None:
    unit = m.group("u").lower()
    if unit == "month":  # configurable per namespace, default [now-90d, now-30d]
        return c.now - timedelta(days=c.few_months[0]), c.now - timedelta(days=c.few_months[1])
    return c.now - _shift(unit, 3), c.now - _shift(unit, 1)


def _h_n_ago(m: re.Match[str], c: _Ctx) -> _Span | None:
    unit = m.group("u").lower()
    return _around(c, c.now - _shift(unit, _count(m.group("n"))), unit)


def _h_past_n(m: re.Match[str], c: _Ctx) -> _Span | None:
    """"last week" -> [now-7d, now] (rolling, as the issue specifies), "the past 3 months" -> [now-3mo, now]."""
    return c.now - _shift(m.group("u").lower(), _count(m.group("n"))), c.now


def _around(c: _Ctx, target: datetime, unit: str) -> _Span:
    """"3 days ago" is that calendar day; weeks/months/years ago get half a unit's slack each side."""
    if unit == "day":
        return _days(c, target.date(), target.date())
    half = {"week": relativedelta(days=3), "month": relativedelta(days=15), "year": relativedelta(months=6)}[unit]
    return _days(c, (target - half).date(), (target + half).date())


def _span_months(c: _Ctx, first: date, months: int) -> _Span:
    return _days(c, first, first + relativedelta(months=months, days=-1))


_Handler = Callable[[re.Match[str], _Ctx], "_Span | None"]
#: Tiers: when a query holds several expressions the lowest tier wins, then the earlier rule.
#: Specific beats vague: "recently ... in May 2022" means May 2022. ABS = an absolute date: tier 2
#: with an explicit year, else 4.
_SESSION, _RANGE, _REL, _FUZZY, _ABS = 0, 1, 3, 5, -1

#: One point in time each: (name, tier, pattern, handler). Used on their own (after the range rules)
#: and as range endpoints. Separate entries, not one alternation: `re` forbids repeated group names.
_POINTS: tuple[tuple[str, int, str, _Handler], ...] = (
    ("few_ago", _REL, rf"(?:a\s+)?(?:few|several)\s+{_UNIT}\s+ago", _h_few_ago),
    ("n_ago", _REL, rf"(?P<n>{_NUMW})\s+{_UNIT}\s+ago", _h_n_ago),
    ("past_n", _REL, rf"(?:(?:in|over|during|within)\s+)?(?:the\s+)?(?:past|last|previous)\s+"
                     rf"(?:(?P<n>{_NUMW}|few|several)\s+)?{_UNIT}", _h_past_n),
    ("recently", _FUZZY, r"recently|lately|of\s+late|these\s+days|nowadays|in\s+recent\s+(?:days|weeks|months|times)",
     lambda m, c: (c.now - timedelta(days=c.recent_days), c.now)),
    ("yesterday", _REL, r"yesterday|last\s+night",  # all of yesterday (not only now-24h), up to now
     lambda m, c: (_at(c, c.now.date() - timedelta(days=1)), c.now)),
    ("today", _REL, r"earlier\s+today|today|tonight|this\s+(?:morning|afternoon|evening)",
     lambda m, c: (_at(c, c.now.date()), c.now)),
    ("this_unit", _REL, rf"(?:earlier\s+)?this\s+{_UNIT}", _h_this_unit),
    ("weekend", _REL, r"(?:(?P<mod>last|this|past)\s+|over\s+the\s+)weekend", _h_weekend),
    ("weekday", _REL, rf"(?:(?P<mod>last|this|past|on)\s+)?(?P<wd>{_WD_FULL})", _h_weekday),
    ("weekday_abbr", _REL, rf"(?P<mod>last|this|on)\s+(?P<wd>{_WD_ABBR})", _h_weekday),
    ("season", _ABS, rf"(?:(?P<mod>last|this|past|in\s+the|during\s+the|over\s+the)\s+)?"
                     rf"(?P<s>spring|summer|fall|autumn|winter)(?:\s+(?:of\s+)?(?P<y>{_YEAR}))?", _h_season),
    ("quarter", _ABS, rf"(?:q(?P<q>[1-4])|the\s+(?P<qo>first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter)"
                      rf"(?:\s+(?:of\s+)?(?P<y>{_YEAR}))?", _h_quarter),
    ("iso_date", _ABS, r"(?P<y>\d{4})-(?P<mon>\d{1,2})-(?P<d>\d{1,2})(?!\d)", _h_day),
    ("numeric_date", _ABS, r"(?<![\d.])\d{1,2}[/.]\d{1,2}[/.](?:\d{4}|\d{2})(?![\d.])", _h_numeric),
    ("month_day", _ABS, rf"(?P<mon>{_MONTH_ANY})\s+(?P<d>{_DAY})(?:(?:\s*,\s*|\s+)(?P<y>{_YEAR}))?", _h_day),
    ("day_month", _ABS, rf"(?:the\s+)?(?P<d>{_DAY})(?:\s+of)?\s+(?P<mon>{_MONTH_ANY})(?!\w)"
                        rf"(?:\s*,?\s*(?P<y>{_YEAR}))?", _h_day),
    ("month_year", _ABS, rf"(?P<mon>{_MONTH_ANY})\s*,?\s+(?P<y>{_YEAR})", _h_month),
)
#: Too weak alone (a bare month, a lone number): accepted only as range endpoints ("since March").
_ENDPOINT_ONLY = ((re.compile(rf"(?P<mon>{_MONTH_FULL})", _I), _h_month), (re.compile(rf"(?P<y>{_YEAR})"), _h_year))
_POINT_FULL = tuple((re.compile(p, _I), h) for _, _, p, h in _POINTS) + _ENDPOINT_ONLY
_POINT = "(?:" + "|".join(re.sub(r"\(\?P<\w+>", "(?:", p) for _, _, p, _ in _POINTS) + f"|{_MONTH_FULL}|{_YEAR})"


def _point(span: str, c: _Ctx) -> _Span | None:
    """Resolve one range endpoint (the span a range rule captured)."""
    span = " ".join(span.split())
    for rx, handler in _POINT_FULL:
        m = rx.fullmatch(span)
        if m:
            return handler(m, c)
    return None


def _h_between(m: re.Match[str], c: _Ctx) -> _Span | None:
    a, b_text = _point(m.group("a"), c), m.group("b")
    if a is None:
        return None
    b: _Span | None = None
    if re.fullmatch(r"\d{1,2}(?:st|nd|rd|th)?", b_text):  # "between May 1 and 10": B borrows A's month
        with suppress(ValueError):
            d = date(a[0].year, a[0].month, _int(b_text))
            b = _days(c, d, d)
    else:
        b = _point(b_text, c)
    years = 0  # "from December 20 to January 5, 2024": a yearless start borrows the end's year
    while b is not None and a[0] > b[1] and years < 8 and not re.search(_YEAR, m.group("a")):
        years += 1
        a = _point(m.group("a"), replace(c, now=c.now - relativedelta(years=years))) or a
    return (min(a[0], b[0]), max(a[1], b[1])) if b else None  # "between June and May" is still a window


def _h_n_before(m: re.Match[str], c: _Ctx) -> _Span | None:
    """"the week before June 3" -> the 7 days before it; "two weeks after June 3" -> around June 17."""
    a = _point(m.group("a"), c)
    if a is None:
        return None
    unit, before = m.group("u").lower(), m.group("dir").lower() == "before"
    if m.group("the"):
        return (a[0] - _shift(unit, 1), a[0] - _US) if before else (a[1] + _US, a[1] + _shift(unit, 1))
    n = _shift(unit, _count(m.group("n")))
    return _around(c, a[0] - n if before else a[1] + n, unit)


def _h_open(m: re.Match[str], c: _Ctx) -> _Span | None:
    """since A -> [A, now]; after A -> [end of A, now]; before A -> [.., A); until A -> [.., end of A]."""
    a, kind = _point(m.group("a"), c), m.group("k").lower()
    if a is None:
        return None
    if kind in ("since", "after"):
        return (a[0] if kind == "since" else a[1] + _US), c.now
    end = a[0] - _US if kind in ("before", "prior to") else a[1]
    return min(OPEN_START, end), end


_B = rf"(?P<b>{_POINT}|\d{{1,2}}(?:st|nd|rd|th)?)"
_RULE_TABLE: tuple[tuple[str, int, str, _Handler], ...] = (
    ("session", _SESSION, r"since\s+(?:(?:we|i|you)\s+(?:last\s+)?(?:talked|spoke|spoken|chatted|met|talk|speak|chat)"
                r"(?:\s+last)?|(?:our|my|the|your)\s+last\s+(?:conversation|chat|session|talk|call|meeting)"
                r"|(?:the\s+)?last\s+time(?:\s+(?:we|i|you)\s+(?:talked|spoke|chatted|met))?)",
     lambda m, c: (c.last_session_end, c.now) if c.last_session_end is not None else None),
    ("future", _RANGE, rf"tomorrow|(?:(?:in\s+)?the\s+)?next\s+(?:(?:{_NUMW}|few|several)\s+)?(?:days?|weeks?|weekend"
               rf"|months?|years?|time|{_WD_FULL}|{_MONTH_FULL}|spring|summer|fall|autumn|winter)(?!\w)"
               rf"|in\s+(?:{_NUMW}|(?:a\s+)?few|several)\s+(?:days?|weeks?|months?|years?)(?!\w)(?!\s+ago)"
               r"|later\s+this\s+(?:week|month|year)",
     lambda m, c: None),  # future: matched (and masked) so no other rule reads it, but no window
    ("n_before", _RANGE, rf"(?:(?P<n>{_NUMW})|(?P<the>the))\s+{_UNIT}\s+(?P<dir>before|after)\s+(?P<a>{_POINT})",
     _h_n_before),
    ("between", _RANGE, rf"between\s+(?P<a>{_POINT})\s+(?:and|&)\s+{_B}", _h_between),
    ("from_to", _RANGE, rf"from\s+(?P<a>{_POINT})\s*(?:to|until|till|through|thru|-|–)\s*{_B}", _h_between),
    ("since", _RANGE, rf"(?P<k>since)\s+(?P<a>{_POINT})", _h_open),
    ("after", _RANGE, rf"(?P<k>after)\s+(?P<a>{_POINT})", _h_open),
    ("before", _RANGE, rf"(?<!\bday\s)(?P<k>before|prior\s+to)\s+(?P<a>{_POINT})", _h_open),
    ("until", _RANGE, rf"(?P<k>until|till|up\s+to|through)\s+(?P<a>{_POINT})", _h_open),
    *_POINTS,
    ("month", _ABS, rf"(?P<mod>in|during|throughout|early|late|mid|last|this|(?:the\s+)?(?:end|start|beginning|middle)"
                    rf"\s+of)(?:\s+|-)(?:the\s+month\s+of\s+)?(?P<mon>{_MONTH_FULL})", _h_month),
    ("year", _ABS, rf"(?:in|during|throughout|back\s+in|the\s+year|early|late|mid|(?:the\s+)?(?:end|start|beginning"
                   rf"|middle)\s+of)(?:\s+|-)(?P<y>{_YEAR}){_NOT_A_UNIT}", _h_year),
)
_RULES = tuple((n, t, re.compile(rf"(?<!\w)(?:{p})(?!\w)", _I), h) for n, t, p, h in _RULE_TABLE)
#: Rule names in table order (TemporalMatch.rule is one of these).
RULE_NAMES: tuple[str, ...] = tuple(r[0] for r in _RULES)
#: Every rule's pattern: what the parser would read as a time, whether or not it yields a window
#: ("next month" is read, then dropped as future). `cues.mentions_time` scans memory text with them.
TIME_PATTERNS: tuple[re.Pattern[str], ...] = tuple(r[2] for r in _RULES)

def parse_time(text: str, now: datetime, *, last_session_end: datetime | None = None, recent_days: int = 30,
               few_months: tuple[int, int] = (90, 30)) -> TemporalMatch | None:
    """The time window `text` asks about, or None when it names none we can trust.

    `now` must be timezone-aware (QueryError otherwise); windows are in now's zone. `recent_days`
    sets "recently"/"lately" ([now-N d, now]); `few_months` = (from, to) days back for "a few months
    ago". "since we last talked" needs `last_session_end` (without one: None). Several expressions:
    the most specific wins (session, ranges, dates with a year, relative, yearless dates, "recently").
    Windows are clipped to `now`; one wholly in the future gives None.
    """
    require_aware(now, "now")
    if last_session_end is not None:
        require_aware(last_session_end, "last_session_end")
    if not isinstance(text, str):
        raise QueryError(f"query must be a string, got {type(text).__name__}")
    lo, hi = few_months
    if recent_days < 0 or lo < 0 or hi < 0:
        raise QueryError("recent_days and few_months must be >= 0")
    c = _Ctx(now, last_session_end, recent_days, (max(lo, hi), min(lo, hi)))
    work, best = text, None
    for order, (name, tier, rx, handler) in enumerate(_RULES):
        pieces, last = [], 0
        for m in rx.finditer(work):
            try:
                window = _clip(handler(m, c), now)
            except (ValueError, OverflowError):  # e.g. a date outside datetime's range: no window
                window = None
            pieces += [work[last:m.start()], " " * (m.end() - m.start())]
            last = m.end()
            phrase = text[m.start():m.end()].strip()
            key = (tier if tier != _ABS else 2 if re.search(_YEAR, phrase) else 4, order)
            if window is not None and (best is None or key < best[0]):
                best = (key, TemporalMatch(window, phrase, name))
        if pieces:  # mask what this rule read, in one pass (linear in the text, however many matches)
            work = "".join(pieces) + work[last:]
    return best[1] if best is not None else None


def _clip(span: _Span | None, now: datetime) -> TimeWindow | None:
    """Clip to now; a span starting in the future ("since 2150") or inverted gives None."""
    if span is None:
        return None
    start, end = span
    if start > end or start > now:
        return None
    return TimeWindow(start, min(end, now))
