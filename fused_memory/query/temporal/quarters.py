"""Quarters for the temporal parser: "Q3", "the third quarter of 2022", "the fourth quarter of last
year", and the quarters that are no time ("the fourth quarter of the game").

Split from `points.py` (its point rules use `h_quarter`; `parser._RULE_TABLE` runs the
"quarter_of_year" rule before the rolling "last year" and the future rule's "next year").
"""

from __future__ import annotations

import re
from datetime import date

from .calendar import Ahead, Ctx, Span, span_months
from .vocab import ICASE, ORDINALS, unmasked

__all__ = ["QUARTER_OF_YEAR", "h_quarter_of_year", "h_quarter"]

#: After "the third quarter" with no year: "of" a thing that is no year and holds no number ("of the
#: game", "of the match"), so the quarter is that thing's ("of fiscal 2023", "of FY24" are times).
_QUARTER_OF_SOMETHING = re.compile(r"\s+of\s+(?!(?:[\w']+\s+){0,3}?(?:years?|fiscal|financial|calendar|fy\w*)\b)"
                                   r"(?![^.,;:?!]{0,30}\d)", ICASE)


def h_quarter(m: re.Match[str], c: Ctx) -> Span | None:
    """"Q3", "the third quarter of 2022": that quarter; with no year, the latest one begun."""
    qo = (m.group("qo") or "").lower()
    if qo == "last" and not m.group("y"):
        return None  # "the last quarter of the game"; "the last quarter of 2023" is Q4
    if qo and not m.group("y") and _QUARTER_OF_SOMETHING.match(unmasked(m), m.end()):
        return None  # "the fourth quarter of the game"; "the third quarter of the year" is Q3
    q = _number(m)
    y = int(m.group("y")) if m.group("y") else c.now.year - (c.now.month < 3 * q - 2)  # latest begun
    return _quarter(c, y, q)


def _number(m: re.Match[str]) -> int:
    """The quarter a match names: "Q3", "the third quarter", "the last quarter" (the fourth)."""
    qo = (m.group("qo") or "").lower()
    return int(m.group("q")) if m.group("q") else 4 if qo == "last" else ORDINALS[qo]


def _quarter(c: Ctx, year: int, q: int) -> Span:
    return span_months(c, date(year, 3 * q - 2, 1), 3)


#: "the fourth quarter of last year", "Q1 of next year": run before the rolling "last year" and the
#: future rule's "next year" (`parser._RULE_TABLE`), which would read the year alone.
QUARTER_OF_YEAR = (r"(?:q(?P<q>[1-4])|(?:the\s+)?(?P<qo>first|second|third|fourth|1st|2nd|3rd|4th|last)\s+quarter)"
                   r"\s+of\s+(?:the\s+)?(?P<rel>this|current|last|previous|next|coming)\s+year(?!\w)")


def h_quarter_of_year(m: re.Match[str], c: Ctx) -> Span | None:
    """"the fourth quarter of last year": that quarter, not the rolling year "last year" alone reads."""
    rel = m.group("rel").lower()
    y = c.now.year + (1 if rel in ("next", "coming") else -1 if rel in ("last", "previous") else 0)
    span = _quarter(c, y, _number(m))
    return Ahead(span) if y > c.now.year else span
