"""Time expressions in a query -> a closed `TimeWindow`, with `now` always injected.

Why a rule table of our own in front of `dateparser` (docs/decisions/0022-temporal-rule-table.md):
dateparser alone is slow and over-eager ("we" parses as a Wednesday, "port 9077" as
the year 9077, "may" as this month). So our regexes find the candidate spans and decide the
granularity (day, month, quarter, year, range); the regular forms ("March 15th", "7 May 2023",
"2023-05-08") are resolved by the rule itself, and only the irregular numeric forms ("5/8/23") go to
dateparser, always with `languages=['en']`, `RELATIVE_BASE=now` (naive wall time in now's zone; the
zone is reattached) and `PREFER_DATES_FROM='past'`.

Rules run in table order (session, future, ranges, then single points). A span a rule has matched
is masked, even when it gave no window, so a later rule never reinterprets part of it (the "last" of
"since we last talked" is not "last <unit>"). Every window is clipped to `now` and a window wholly
in the future gives None, except a span its handler marks `Ahead` ("next week", "tomorrow":
`future.py`) or a date with its year still to come; no window is ever inverted. Single points and
their handlers live in `points.py`; this module holds the ranges, the rule order and `parse_time`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass, replace
from datetime import date, datetime, timezone

from dateutil.relativedelta import relativedelta

from ...errors import QueryError
from ...types import TimeWindow
from ...validation import require_aware
from .calendar import Ahead, Ctx, Span, around, days, shift
from .future import FUTURE_PATTERN, FUTURE_TAG_PATTERN, h_future
from .points import (
    ABS,
    DAY_OF_MONTH,
    DEC_FOLLOWER,
    FUZZY,
    MODAL_FOLLOWER,
    POINT,
    POINTS,
    RANGE,
    REL,
    SESSION,
    Handler,
    h_day_of_month,
    h_month,
    h_year,
    point,
)
from .quarters import QUARTER_OF_YEAR, h_quarter_of_year
from .vocab import (
    ICASE,
    MASK,
    MONTH_ANY,
    MONTH_FULL,
    NOT_A_UNIT,
    NUMW,
    UNIT,
    US,
    WD_ABBR,
    WD_FULL,
    YEAR,
    count_of,
    leading_int,
    unmasked,
)

__all__ = ["TemporalMatch", "parse_time", "matches", "RULE_NAMES", "TIME_PATTERNS", "OPEN_START", "VAGUE_TIERS",
           "VAGUE_RULES"]

#: The future rule's tier: below every other (fuzzy "recently" is 5), so "what did I say yesterday
#: about next week's trip?" asks about yesterday.
_AHEAD_TIER = 6

#: Start of open-ended windows ("before June 2023"): far enough back for any agent memory.
OPEN_START = datetime(1900, 1, 1, tzinfo=timezone.utc)


@dataclass(frozen=True)
class TemporalMatch:
    """The window a query asks about, the phrase that said so, and the rule that read it."""

    window: TimeWindow
    phrase: str
    rule: str


def _h_between(m: re.Match[str], c: Ctx) -> Span | None:
    if not _endpoints_are_times(m):
        return None
    if m.group("a0"):
        return _borrowed(m.group("a0"), m.group("b0"), c)
    a_text, b_text = m.group("a"), m.group("b")
    a = point(a_text, c)
    if a is None:
        return None
    b: Span | None = None
    if re.fullmatch(r"\d{1,2}(?:st|nd|rd|th)?", b_text):  # "between May 1 and 10": B borrows A's month
        if re.fullmatch(YEAR, a_text.strip()):
            return None  # "2024-05": a year and a month, not the year up to the 5th
        with suppress(ValueError):
            d = date(a[0].year, a[0].month, leading_int(b_text))
            b = days(c, d, d)
    else:
        b = point(b_text, c)
    # A start after its end is read as the previous one: "from December 20 to January 5" (a
    # yearless date: the previous year), "from Friday to Monday" (a weekday: the previous week).
    # Anything else ("between yesterday and 3 days ago") is taken in either order.
    step = (None if re.search(YEAR, a_text) else relativedelta(weeks=1) if _WEEKDAY_WORD.search(a_text)
            else relativedelta(years=1) if _YEARLY_WORD.search(a_text) else None)
    back = 0
    while b is not None and step is not None and a[0] > b[1] and back < 8:
        back += 1
        a = point(a_text, replace(c, now=c.now - step * back)) or a
    return (min(a[0], b[0]), max(a[1], b[1])) if b else None  # "between June and May" is still a window


def _borrowed(a0: str, b_text: str, c: Ctx) -> Span | None:
    """"between 1 and 5 May", "from 2 to 4 weeks ago": the bare first number takes the rest of the
    second point. A day is in the second point's month, or the month before when it is later ("from
    the 28th to the 3rd of March"); a first day that is no date ("from 31 to 5 June", "between the
    1st and 12 days ago") leaves the second point, as it was read alone."""
    b = point(b_text, c)
    if b is None:
        return None
    num = _LEAD_NUMBER.match(a0).group("num")  # type: ignore[union-attr]
    if _YEARLY_WORD.search(b_text):
        end, day = b[0].date(), leading_int(num) if num[0].isdigit() else count_of(num)
        for month_start in (end.replace(day=1), end.replace(day=1) - relativedelta(months=1)):
            with suppress(ValueError):
                first = month_start.replace(day=day)
                if first <= end:
                    return days(c, first, end)
        return b
    a = point(_LEAD_NUMBER.sub(num, b_text, count=1), c)
    return (min(a[0], b[0]), max(a[1], b[1])) if a is not None else b


def _endpoints_are_times(m: re.Match[str]) -> bool:
    """An endpoint read alone loses what follows it: "from 2 to 3 may cause issues" ends in the verb
    "may", "from 1 to 3 dec places" in a decimal. Checked here against the query's own text."""
    for group in ("a", "b", "b0"):
        text = m.group(group)
        if not text:
            continue
        last = text.rstrip(".").rsplit(None, 1)[-1].lower()
        follower = MODAL_FOLLOWER if last == "may" else DEC_FOLLOWER if last == "dec" else None
        if follower is not None and follower.match(unmasked(m), m.end(group)):
            return False
    return True


_WEEKDAY_WORD = re.compile(rf"(?<!\w)(?:{WD_FULL}|{WD_ABBR})(?!\w)", ICASE)
_YEARLY_WORD = re.compile(rf"(?<!\w)(?:{MONTH_ANY}|spring|summer|fall|autumn|winter)(?!\w)", ICASE)


def _h_n_before(m: re.Match[str], c: Ctx) -> Span | None:
    """"the week before June 3" -> the 7 days before it; "two weeks after June 3" -> around June 17."""
    a = point(m.group("a"), c)
    if a is None:
        return None
    unit, before = m.group("u").lower(), m.group("dir").lower() == "before"
    if m.group("the"):
        return (a[0] - shift(unit, 1), a[0] - US) if before else (a[1] + US, a[1] + shift(unit, 1))
    n = shift(unit, count_of(m.group("n")))
    return around(c, a[0] - n if before else a[1] + n, unit)


def _h_open(m: re.Match[str], c: Ctx) -> Span | None:
    """since A -> [A, now]; after A -> [end of A, now]; before A -> [.., A); until A -> [.., end of A]."""
    a, kind = point(m.group("a"), c), m.group("k").lower()
    if a is None:
        return None
    if kind in ("since", "after"):
        return (a[0] if kind == "since" else a[1] + US), c.now
    end = a[0] - US if kind in ("before", "prior to") else a[1]
    return min(OPEN_START, end), end


#: "up to" as "until", not the phrasal verb: "what did I get up to last weekend?" asks about the weekend.
_UP_TO = r"(?<!\bget\s)(?<!\bgot\s)(?<!\bgets\s)(?<!getting\s)(?<!gotten\s)(?<!\bbeen\s)(?<!\bgo\s)(?<!went\s)up\s+to"
_B = rf"(?P<b>{POINT}|\d{{1,2}}(?:st|nd|rd|th)?(?![-/.]\d)|now|the\s+present)"  # "... and now": up to now
#: A bare number before a point that starts with one ("1" of "between 1 and 5 May"): it takes B's
#: month, year or unit, so "from 2 to 4 weeks ago" spans both, where B alone would be read.
_BARE = r"(?:\d{1,2}(?:st|nd|rd|th)?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_LEAD_NUMBER = re.compile(rf"(?:the\s+)?(?P<num>{_BARE})(?!\w)", ICASE)
_A0 = rf"(?P<a0>(?:the\s+)?{_BARE})"
_B0 = rf"(?P<b0>(?=(?:the\s+)?{_BARE}\s){POINT})"
_TO = r"(?:to|until|till|through|thru|-|–)"
_RULE_TABLE: tuple[tuple[str, int, str, Handler], ...] = (
    ("session", SESSION, r"since\s+(?:(?:we|i|you)\s+(?:last\s+)?(?:talked|spoke|spoken|chatted|met|talk|speak|chat)"
                         r"(?:\s+last)?|(?:our|my|the|your)\s+last\s+(?:conversation|chat|session|talk|call|meeting)"
                         r"|(?:the\s+)?last\s+time(?:\s+(?:we|i|you)\s+(?:talked|spoke|chatted|met))?)",
     lambda m, c: (c.last_session_end, c.now) if c.last_session_end is not None else None),
    # before "future", which would take the "next year" of "the first quarter of next year"
    ("quarter_of_year", REL, QUARTER_OF_YEAR, h_quarter_of_year),
    # ahead of now: kept whole, and the lowest tier, so a past phrase in the query wins (future.py)
    ("future", _AHEAD_TIER, FUTURE_PATTERN, h_future),
    ("n_before", RANGE, rf"(?:(?P<n>{NUMW})|(?P<the>the))\s+{UNIT}\s+(?P<dir>before|after)\s+(?P<a>{POINT})",
     _h_n_before),
    ("between", RANGE, rf"between\s+(?:(?P<a>{POINT})\s+(?:and|&)\s+{_B}|{_A0}\s+(?:and|&)\s+{_B0}){NOT_A_UNIT}",
     _h_between),
    ("from_to", RANGE, rf"from\s+(?:(?P<a>{POINT})\s*{_TO}\s*{_B}|{_A0}\s*{_TO}\s*{_B0}){NOT_A_UNIT}",
     _h_between),
    ("since", RANGE, rf"(?P<k>since)\s+(?P<a>{POINT}){NOT_A_UNIT}", _h_open),
    ("after", RANGE, rf"(?P<k>after)\s+(?P<a>{POINT}){NOT_A_UNIT}", _h_open),
    ("before", RANGE, rf"(?<!\bday\s)(?P<k>before|prior\s+to)\s+(?P<a>{POINT}){NOT_A_UNIT}", _h_open),
    ("until", RANGE, rf"(?P<k>until|till|{_UP_TO}|through)\s+(?P<a>{POINT}){NOT_A_UNIT}", _h_open),
    *POINTS,
    ("month", ABS, rf"(?P<mod>in|during|throughout|early|late|mid|last|this|(?:the\s+)?(?:end|start|beginning|middle)"
                   rf"\s+of)(?:\s+|-)(?:the\s+month\s+of\s+)?(?P<mon>{MONTH_FULL})", h_month),
    ("year", ABS, rf"(?:in|during|throughout|back\s+in|the\s+year|early|late|mid|(?:the\s+)?(?:end|start|beginning"
                  rf"|middle)\s+of)(?:\s+|-)(?P<y>{YEAR}){NOT_A_UNIT}", h_year),
    ("day_of_month", ABS, DAY_OF_MONTH, h_day_of_month),
)


def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w)(?:{pattern})(?!\w)", ICASE)


_RULES = tuple((n, t, _compiled(p), h) for n, t, p, h in _RULE_TABLE)
#: Rule names in table order (TemporalMatch.rule is one of these).
RULE_NAMES: tuple[str, ...] = tuple(r[0] for r in _RULES)
#: Every rule's pattern: what the parser would read as a time, whether or not it yields a window
#: ("next time" is read, and names no window), less the open-ended "coming up" (a memory asking
#: "anything coming up?" states no time). `cues.mentions_time` scans memory text with them.
TIME_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    _compiled(FUTURE_TAG_PATTERN) if r[0] == "future" else r[2] for r in _RULES)


def parse_time(text: str, now: datetime, *, last_session_end: datetime | None = None, recent_days: int = 30,
               few_months: tuple[int, int] = (90, 30)) -> TemporalMatch | None:
    """The time window `text` asks about, or None when it names none we can trust.

    `now` must be timezone-aware (QueryError otherwise); windows are in now's zone. `recent_days`
    sets "recently"/"lately" ([now-N d, now]); `few_months` = (from, to) days back for "a few months
    ago". "since we last talked" needs `last_session_end` (without one: None). Several expressions:
    the most specific wins (session, ranges, dates with a year, relative, yearless dates, "recently").
    Windows are clipped to `now`; one wholly in the future gives None, unless the query names it as
    ahead ("next week", "tomorrow", "in 3 days": those are kept whole).
    """
    require_aware(now, "now")
    if last_session_end is not None:
        require_aware(last_session_end, "last_session_end")
    if not isinstance(text, str):
        raise QueryError(f"query must be a string, got {type(text).__name__}")
    lo, hi = few_months
    if recent_days < 0 or lo < 0 or hi < 0:
        raise QueryError("recent_days and few_months must be >= 0")
    c = Ctx(now, last_session_end, recent_days, (max(lo, hi), min(lo, hi)), text)
    best: tuple[tuple[int, int], TemporalMatch] | None = None
    for key, name, phrase, span in matches(text, c):
        try:
            window = _clip(span, now)
        except (ValueError, OverflowError):  # e.g. a date outside datetime's range: no window
            window = None
        if window is not None and (best is None or key < best[0]):
            best = (key, TemporalMatch(window, phrase, name))
    return best[1] if best is not None else None


def matches(text: str, c: Ctx) -> Iterator[tuple[tuple[int, int], str, str, Span | None]]:
    """Every time phrase the rules read in `text`, in table order: (its rank, lowest first: the tier
    and the rule's place), the rule's name, the phrase, and its span (None: read, masked, but no
    time). `parse_time` keeps the best window; `statements.stated_times` keeps them all."""
    work = text
    for order, (name, tier, rx, handler) in enumerate(_RULES):
        pieces, last = [], 0
        for m in rx.finditer(work):
            phrase = text[m.start():m.end()].strip()
            dated = tier == ABS and re.search(YEAR, phrase) is not None  # a date with its year
            try:
                span = handler(m, c)
                if dated and span is not None and (span[0] > c.now or c.plans):
                    span = Ahead(span)  # still to come, or asked of plans: "on April 15, 2026", "in 2100"
            except (ValueError, OverflowError):  # e.g. a date outside datetime's range: no window
                span = None
            pieces += [work[last:m.start()], MASK * (m.end() - m.start())]
            last = m.end()
            yield (2 if dated else 4 if tier == ABS else tier, order), name, phrase, span
        if pieces:  # mask what this rule read, in one pass (linear in the text, however many matches)
            work = "".join(pieces) + work[last:]


#: Rules whose window is vague ("recently", "lately", "these days", "the end of the month"): a window
#: to prefer, not one to hold a question to (`ensemble.after_fusion.window_first`).
VAGUE_RULES: frozenset[str] = frozenset(name for name, tier, _, _ in _RULE_TABLE if tier == FUZZY)

#: The tiers a statement's times are not read from: "since we last talked" needs a session, and
#: "recently", "these days" or "the end of the month" say too little of when.
VAGUE_TIERS = frozenset({SESSION, FUZZY})


def _clip(span: Span | None, now: datetime) -> TimeWindow | None:
    """Clip to now; a span starting in the future ("since 2150") or inverted gives None. A span the
    query names as ahead (`Ahead`: "next week", "this Friday" on a Thursday) is kept whole."""
    if span is None:
        return None
    start, end = span
    if start > end or (start > now and not isinstance(span, Ahead)):
        return None
    return TimeWindow(start, end if isinstance(span, Ahead) else min(end, now))
