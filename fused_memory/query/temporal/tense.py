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

__all__ = ["past_tense", "present_tense", "asks_ahead"]

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
    """Whether `text` is told in the past tense (a verb or auxiliary that says so). "Have I got",
    "we've got" are the present: what one has."""
    return any(m.group().lower() not in _NOT_PAST
               and not (m.group().lower() == "got" and _HAVE_GOT.search(text, 0, m.start()))
               for m in _PAST.finditer(text))


_HAVE_GOT = re.compile(r"(?:\b(?:have|has|'ve|\u2019ve)(?:\s+(?:i|we|you|they))?|\b(?:i|we|you|they)\s+have)\s+$",
                       ICASE)


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


#: A verb or auxiliary of the present or the future: "what's happening on June 23?", "what am I doing
#: on the 14th?", "anything planned for the 14th of June?", "is the vet on the 14th?".
_PRESENT = re.compile(
    r"(?:\b(?:is|isn't|are|aren't|am|do|does|don't|doesn't|have|has|will|won't|shall|can|going|gonna|doing"
    r"|happening|planned|scheduled|booked|arranged|due|need|needs)\b|\w(?:'s|'re|'m|\u2019s|\u2019re|\u2019m)\b)",
    ICASE)


def present_tense(text: str) -> bool:
    """Whether `text` is told in the present or the future (and not in the past): a date it names
    with no year is then the coming one."""
    return _PRESENT.search(text) is not None and not past_tense(text)
