"""How a query is told: in the past tense ("what did we do this Sunday?") or asking about plans ("what
do I have on Tuesday?"). A phrase that could point either way ("this Sunday", "in 3 days", "today", a
bare "Tuesday" or "April 2nd") reads back or ahead by it; stories use the future's words too ("we built
it in 3 days", "the next week he quit"), and only the tense tells them apart.

Its own module, below the calendar: the query's context (`calendar.Ctx`) offers both readings as the
flags `past` and `plans`, computed only when a rule asks, and it needs these detectors without
importing any rule.
"""

from __future__ import annotations

import re

from .vocab import ICASE

__all__ = ["past_tense", "asks_ahead"]

#: A past-tense verb or auxiliary: the query tells of another time ("how did I finish it in a few
#: days?"). "-ed" words that describe plans or states are not past ("what's planned for next week").
_PAST = re.compile(
    r"\b(?:did|didn't|was|wasn't|were|weren't|had|hadn't|went|took|got|came|became|grew|lost|learnt|spent|made|"
    r"built|ran|won|wrote|began|met|saw|said|told|gave|felt|left|thought|bought|brought|kept|found|paid|sold|"
    r"sent|heard|knew|held|fell)\b|\b[a-z]{3,}ed\b", ICASE)
_NOT_PAST = frozenset(
    "planned scheduled booked arranged expected supposed needed required assigned confirmed invited registered "
    "interested excited involved concerned related based used called named located tired married worried "
    "prepared organized organised reserved speed breed embed proceed succeed exceed indeed shred".split())


def past_tense(text: str) -> bool:
    """Whether `text` is told in the past tense (a verb or auxiliary that says so)."""
    return any(m.group().lower() not in _NOT_PAST for m in _PAST.finditer(text))


#: Words that ask about plans: a bare "Tuesday" or "April 2nd" then means the one to come.
_PLANS = re.compile(
    r"\b(?:will|won't|going\s+to|gonna|do\s+i\s+have|have\s+i\s+got|am\s+i|are\s+we|is\s+there|what'?s\s+on"
    r"|what\s+is\s+on|on\s+for|(?:'s|is|are|be)\s+(?:plann?ed|scheduled)|plans?|planning|need\s+to|have\s+to"
    r"|should\s+i|upcoming"
    r"|coming\s+up|due|remind\s+me)\b", ICASE)


def asks_ahead(text: str) -> bool:
    """Whether `text` asks about plans (and is not told in the past tense): "what do I have on
    Tuesday?" is next Tuesday, "what did I do on Tuesday?" the last one."""
    return bool(_PLANS.search(text)) and not past_tense(text)
