"""The times a memory's text states, read where it was said: "booked the vet for the 14th" said on
June 3 states June 14; "we moved to York last summer" said in December states that summer.

A memory has three kinds of time (`times.MemoryTimes` reads them together): when
it happened (`event_at`, when the caller knows it), the times its text states (these), and when it
was said (`created_at`). People tell an assistant about their plans and their past in the same
breath, so the text's own times are read once, at write time, relative to when the text was said,
by the same rules that read a question's time (`parser.matches`), with two differences:

* a statement is not a question: a phrase that could point either way reads ahead unless the text
  is told in the past (`calendar.Ctx.statement`): "dentist on Tuesday" is the coming Tuesday, "we
  met on Tuesday" the last one;
* every phrase counts, not only the most specific, and none is clipped to when it was said (a plan
  lies ahead of it); the vague ones ("recently", "these days", "since we last talked") are left out,
  and "yesterday" is the day itself, not the day up to when it was said.

A text none of whose phrases is a time states none, and an impossible date ("the 31st of February")
is none. Reading never fails a write: whatever goes wrong, the memory states no time.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from ...types import TimeWindow
from ...validation import is_storable
from .calendar import Ctx, days
from .parser import OPEN_START, VAGUE_TIERS, matches

__all__ = ["stated_times", "MAX_STATED", "MAX_SPAN_DAYS"]

_log = logging.getLogger(__name__)

#: At most this many stated times a memory (a long document names many dates; the first ones are
#: the ones a memory's text leads with).
MAX_STATED = 8
#: A stated time is at most about a year ("in 2021", "last summer"); a longer span ("since 2019",
#: "valid till 2035") says how long something lasts, not when the memory is about.
MAX_SPAN_DAYS = 400
#: Only the first characters of a text are read for times (a memory is a sentence or a few).
_MAX_CHARS = 2000


def stated_times(text: str, said: datetime) -> tuple[TimeWindow, ...]:
    """The windows `text`'s time phrases name, read relative to `said` (aware), in the order the text
    names them, without repeats; () when it names none or cannot be read."""
    if not isinstance(text, str) or not text.strip() or said.tzinfo is None:
        return ()
    try:
        return _read(text[:_MAX_CHARS], said)
    except Exception as exc:  # noqa: BLE001 - a parse must never cost the write
        _log.warning("could not read the times stated in a memory (%s: %s); it states none", type(exc).__name__, exc)
        return ()


def _read(text: str, said: datetime) -> tuple[TimeWindow, ...]:
    c = Ctx(said, None, 30, (90, 30), text, statement=True)
    found: list[tuple[int, TimeWindow]] = []
    for (tier, _order), name, phrase, span in matches(text, c):
        if span is None or tier in VAGUE_TIERS:
            continue
        start, end = span
        if name == "yesterday":  # the day itself (a question's "yesterday" runs up to now)
            start, end = days(c, said.date() - timedelta(days=1), said.date() - timedelta(days=1))
        if start > end or not (is_storable(start) and is_storable(end)) or start <= OPEN_START \
                or (end - start).days > MAX_SPAN_DAYS:
            continue  # "valid till 2035", "good through 2027": a deadline, not a time the text is about
        at = text.find(phrase)
        found.append((at if at >= 0 else len(text), TimeWindow(start, end)))
    out: list[TimeWindow] = []
    for _, window in sorted(found, key=lambda f: f[0]):
        if window not in out:
            out.append(window)
    return tuple(out[:MAX_STATED])
