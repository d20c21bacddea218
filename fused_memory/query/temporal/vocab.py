"""The words the temporal rules share: months, weekdays, years, number words and units, as regex pieces
(uncompiled, for the rules to compose into their own patterns), and the small tables that read what
they matched ("a couple of" -> 2, "15th" -> 15).

One module at the bottom of the package, so every rule spells "Sept", "a couple of" or "2048 tokens"
the same way and no rule module has to import another for its words. Nothing here knows a rule, a
date or the query's context.
"""

from __future__ import annotations

import re
from datetime import timedelta

__all__ = ["ICASE", "US", "MONTH_FULL", "MONTH_ANY", "YEAR", "WD_FULL", "WD_ABBR", "WEEKDAYS", "NUMW", "NUMBERS",
           "ORDINALS", "UNIT", "UNIT_F", "NOT_A_UNIT", "MASK", "unmasked", "leading_int", "count_of"]

#: Every rule pattern is matched whatever the case ("may" and "May" alike; where case matters, as in
#: "Black Friday" or "this May Caroline", the rule checks it itself).
ICASE = re.IGNORECASE
#: One microsecond: a span's last instant is the next span's first less this.
US = timedelta(microseconds=1)
#: What `parser.parse_time` overwrites a rule's match with before the next rule reads the text:
#: neither a word character nor whitespace, so no rule's `\s+` joins the words on either side of
#: what was read ("this tomorrow week" is "tomorrow", not "this week").
MASK = "\0"


def unmasked(m: re.Match[str]) -> str:
    """The text a handler reads around its match ("may" followed by a verb, "the third quarter of
    the game"): masked spans read as spaces there, as they always did, so what was read before
    still separates words but does not stand for punctuation or end the sentence."""
    return m.string.replace(MASK, " ") if MASK in m.string else m.string

MONTH_FULL = r"(?:january|february|march|april|may|june|july|august|september|october|november|december)"
MONTH_ANY = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
             r"|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
YEAR = r"(?<!\d)(?:19\d\d|2[01]\d\d)(?!\d)"

WD_FULL = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
WD_ABBR = r"(?:mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)\.?"
#: A weekday's first three letters, in `datetime.weekday()` order (Monday is 0).
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")

NUMW = (r"(?:(?<![\d.,])\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
        r"|(?:a\s+)?couple(?:\s+of)?)")
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
           "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
#: "the third quarter", "the 2nd week of May".
ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}

UNIT = r"(?P<u>day|week|month|year)s?(?!\w)"
UNIT_F = r"(?P<u>day|week|fortnight|month|year)s?(?!\w)"  # "a fortnight ago", "the past fortnight"
#: A number followed by one of these is a quantity, not a year or a day ("after 2000 ms", "up to 2048
#: tokens", "march 10 miles"); checked after bare years, range endpoints and month-day dates.
NOT_A_UNIT = (r"(?!\s*(?:ms|s|secs?|seconds?|mins?|minutes?|hours?|hrs?|px|kb|mb|gb|tb|%|x|k|rpm|items?|rows?"
              r"|records?|users?|bytes?|lines?|words?|people|dollars|euros|usd|eur|tokens?|iterations?|requests?"
              r"|reqs?|calls?|times|steps?|pages?|points?|calories|kcal|miles?|km|kms|kilomet(?:er|re)s?|met(?:er|re)s?"
              r"|kg|lbs?|pounds?|percent|errors?|messages?|emails?|files?|tasks?|tickets?|commits?|queries|documents?"
              r"|docs?|entries|events?|nodes?|edges?|samples?|epochs?|batches|qps|rps|ops)\b)")


def leading_int(text: str) -> int:
    """The number `text` starts with: "15th" -> 15."""
    return int(re.match(r"\d+", text).group())  # type: ignore[union-attr]


def count_of(word: str | None) -> int:
    """How many a `NUMW` match (or "few", "several") says: "a couple of" -> 2, "few" -> 3, none -> 1."""
    w = " ".join((word or "a").lower().split())
    if "couple" in w or w in ("few", "several"):
        return 2 if "couple" in w else 3
    return int(w) if w.isdigit() else NUMBERS.get(w, 1)
