"""Who someone is: the names a question asks about ("who is Dana?", "who's Lena again?", "tell me
about Aylin"), and whether a memory says who they are ("my little sister Lena ...", "Aylin Demir is
my manager as of today", "Karthik (my old manager from Kestrel)", "Sheila Barrett next door is a
retired nurse").

A "who is X?" question is answered by the memory that says what X is to the user, not by the
latest memory that mentions X: every memory naming Dana matches the name alike (BM25, the graph),
so the stage after fusion puts the memories that define one of the asked names first
(`ensemble.after_fusion.definition_first`). Answer-type matching, as "when did...?" is matched
against memories that state a time (`cues`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from ..results import ParsedQuery

__all__ = ["asks_who", "asked_names", "defines"]

_I = re.IGNORECASE
_WHO = re.compile(r"\bwho(?:'s|\u2019s|\s+is|\s+was|\s+are|\s+were)\b|\btell\s+me\s+about\b"
                  r"|\bwhat\s+do\s+(?:you|i|we)\s+know\s+about\b|\bremind\s+me\s+who\b", _I)
#: Words of kin, work and neighbourhood that say what someone is to the user.
_ROLE = (r"(?:sister|brother|mum|mom|mother|dad|father|son|daughter|kid|child|eldest|youngest|wife|husband|partner"
         r"|girlfriend|boyfriend|fianc[eé]e?|cousin|roomie|roommate|flatmate|aunt|uncle|niece|nephew|grand\w+|in-law|godmother|godfather"
         r"|friend|housemate|neighbou?r|colleague|coworker|co-worker|boss|manager"
         r"|supervisor|teacher|doctor|gp|dentist|landlord|landlady|accountant|coach|therapist|client|mentor"
         r"|advisor|adviser|nanny|babysitter|vet|tutor|director|lead|owner|ex)")


def asks_who(text: str) -> bool:
    """Whether a question asks who someone is ("who is Dana?", "tell me about Aylin"), whatever
    names the parser resolved in it."""
    return _WHO.search(text) is not None


def asked_names(parsed: ParsedQuery) -> tuple[str, ...]:
    """The names a "who is X?" question (or "tell me about X") asks about: the query's entity refs
    (their text and their candidates' names); () for any other question."""
    if not _WHO.search(parsed.text) or not parsed.entity_refs:
        return ()
    names: list[str] = []
    for ref in parsed.entity_refs:
        names.append(ref.text)
        names += [c.name for c in ref.candidates[:2]]
    return tuple(dict.fromkeys(n for n in names if n and len(n) > 1))


def defines(text: str, names: Sequence[str]) -> bool:
    """Whether `text` says who one of `names` is: "my (little) sister Lena", "Lena, my sister",
    "Lena (college friend)", "Aylin Demir is my manager", "Sheila Barrett next door is a retired
    nurse", "Declan rang. He's my eldest".

    Each place the name (or its first word) stands in the text is checked against what may come
    before it and after it, patterns compiled once: a "who is X?" question reads every candidate,
    and compiling a pattern around each new name cost more than the rest of the stage."""
    for name in names:
        for start, end in _places(text, name):
            if _BEFORE.search(text, 0, start) is not None or _AFTER.match(text, end) is not None:
                return True
    return False


def _places(text: str, name: str) -> list[tuple[int, int]]:
    """Where `name` or its first word stands in `text` as whole words: (start, end) of each."""
    out: list[tuple[int, int]] = []
    for form in dict.fromkeys((name, name.split()[0])):
        out += [(m.start(), m.end()) for m in _word(form).finditer(text)]
    return out


@lru_cache(maxsize=4096)
def _word(form: str) -> re.Pattern[str]:
    return re.compile(rf"\b{re.escape(form)}\b", _I)


#: What may stand right before the name: "my (little) sister [is] Lena", "roomies: júlia (FAU), Lena".
_BEFORE = re.compile(rf"(?:\b(?:my|our)\s+(?:\w+\s+){{0,2}}?{_ROLE}\s+(?:is\s+)?"
                     rf"|\b{_ROLE}s?\s*:\s*(?:[\w'-]+(?:\s*\([^)]*\))?\s*,\s*){{0,4}})\Z", _I)
#: What may follow the name: "Lena, my sister", "Lena (college friend)", "Aylin Demir is my manager",
#: "Declan rang. He's my eldest".
_AFTER = re.compile(
    rf"(?:'s|\u2019s)?\s*[,(\u2013\u2014-]\s*(?:(?:my|our|a|an|the|his|her)\s+)?(?:\w+\s+){{0,3}}?{_ROLE}\b"
    rf"|[^.!?;]{{0,40}}?\s(?:is|was|'s|\u2019s)\s+(?:now\s+)?(?:my|our|a|an|the|his|her)\s+"
    rf"|[^.!?]{{0,80}}[.!?]\s+(?:she|he|they)(?:'s|\u2019s|\s+is|\s+was|\s+are)\s+(?:my|our)\s+", _I)
