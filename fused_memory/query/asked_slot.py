"""The slot a question asks: "where do I live?" asks ("user", "home"), "what car does Dana drive?"
("dana", "car"), "who was my manager before Tom?" ("user", "manager").

A question about a fact that changes asks for one of its versions: the current one, or the one the
question names ("before Tom"). When it names the slot a memory states (`slots`), that memory is the
answer whatever else the arms found about the words around it: the stage after fusion puts the
version asked for first (`ensemble.after_fusion.asked_version_first`). Each rule is a named pattern
with its examples (`ASKED_RULES`), read on the question's text; the attribute goes through the same
names as the memories' slots (`slot_vocab.attribute`), so "boss" asks what "my manager is" states.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .slot_vocab import ASKED_AS, ATTRIBUTES, attribute

__all__ = ["AskedSlot", "AskedRule", "ASKED_RULES", "asked_slot"]


@dataclass(frozen=True)
class AskedSlot:
    """Whose attribute a question asks (`subject`: "user" or a name, case-folded), as one or more
    attribute names ("what do I do for work?" may be answered by a role or an employer)."""

    subject: str
    attributes: tuple[str, ...]
    rule: str

    @property
    def keys(self) -> frozenset[str]:
        return frozenset(f"{self.subject} {a}" for a in self.attributes)


@dataclass(frozen=True)
class AskedRule:
    """A named question pattern, the examples that made it, and how its match names the slot."""

    name: str
    pattern: re.Pattern[str]
    examples: tuple[tuple[str, str], ...]
    slot: Callable[[re.Match[str]], tuple[str, tuple[str, ...]] | None]


_I = re.IGNORECASE
#: A name is capitalized whatever the flags ("what car does the family drive" names no one).
_NAME = r"(?-i:[A-Z])[\w'-]+(?:\s(?-i:[A-Z])[\w'-]+)?"
_WHO = rf"(?P<who>i|we|(?P<name>{_NAME}))"
_POSS = rf"(?P<poss>my|our|(?P<pname>{_NAME})(?:'s|\u2019s|'))"
_MOD = r"(?:(?:current|new|old|previous|former|first|usual|main|present|latest)\s+)?"
_NOUN = r"(?:(?:sort|kind|type)\s+of\s+)?(?P<noun>[a-z][\w-]*(?:\s[a-z][\w-]*){0,2}?)"
#: Where the attribute's noun ends: the question's end, or words about when that name no attribute.
_END = (r"(?=\s*(?:\?|$|,|\.|!|now\b|these\s+days|at\s+the\s+moment|right\s+now|currently|again|called|before\b"
        r"|back\s+(?:in|then|when)|used\s+to|in\s+\d{4}|last\s+year|originally|anymore|any\s+more|these|this|then"
        r"|when|at\b|with\b|for\b|on\b|in\b))")


def _subject(m: re.Match[str], *groups: str) -> str:
    for g in groups:
        name = m.groupdict().get(g)
        if name:
            return name.casefold()
    return "user"


def _head(noun: str) -> str:
    """The attribute a noun phrase names: "dose of eltroxin" -> "eltroxin", and a phrase the
    vocabulary does not know by its last word ("blood pressure medication" -> "medication")."""
    noun = noun.casefold()
    if " of " in noun:
        noun = noun.rsplit(" of ", 1)[1]
    known = attribute(noun)
    if known != noun or " " not in noun:
        return known
    last = attribute(noun.rsplit(" ", 1)[1])
    return last if last in ATTRIBUTES else noun


def _noun_slot(m: re.Match[str]) -> tuple[str, tuple[str, ...]] | None:
    noun = m.group("noun").casefold()
    if noun in ("name", "plan", "plans", "problem", "thing", "deal", "story", "idea", "favorite", "favourite"):
        return None if noun != "name" else (_subject(m, "pname", "name"), ("name",))
    attr = _head(noun)
    return _subject(m, "pname", "name"), ((attr, "employer") if attr == "role" else (attr,))


def _verb_slot(m: re.Match[str]) -> tuple[str, tuple[str, ...]] | None:
    verb = m.group("verb").casefold()
    return _subject(m, "name"), ASKED_AS.get(verb, ())


def _what_verb_slot(m: re.Match[str]) -> tuple[str, tuple[str, ...]] | None:
    return _subject(m, "name"), (_head(m.group("noun")),)


ASKED_RULES: tuple[AskedRule, ...] = (
    AskedRule("where_verb", re.compile(
        rf"\bwhere\s+(?:do|does|did|am|are|is|was|were)\s+{_WHO}\s+(?:\w+\s+)?(?P<verb>live|living|stay|staying|based"
        r"|work|working|bank|banking)\b", _I),
        (("where do I live?", "user home"), ("where did I work before Hooli?", "user employer"),
         ("where does Dana live now?", "dana home")), _verb_slot),
    AskedRule("who_verb", re.compile(rf"\bwho\s+(?:do|does|did|am|are|is|was)\s+{_WHO}\s+(?:\w+\s+)?"
                                     r"(?P<verb>report|reporting|work|working)\s+(?:to|for)\b", _I),
              (("who do I report to now", "user manager"),), _verb_slot),
    AskedRule("who_does_my", re.compile(rf"\bwho\s+(?:\w+s|runs|does|handles|looks\s+after)\s+{_POSS}\s+{_MOD}{_NOUN}"
                                       rf"{_END}", _I),
              (("who supervises my IC these days?", "user ic"),), _noun_slot),
    AskedRule("what_do_drive", re.compile(rf"\bwhat\s+(?:do|does|did|am|are|is|was)\s+{_WHO}\s+(?:\w+\s+)?"
                                          r"(?P<verb>drive|driving|ride|riding)\b", _I),
              (("what do I drive these days?", "user car"),), _verb_slot),
    AskedRule("job", re.compile(r"\bwhat\s+(?:do|did)\s+(?:i|we)\s+do\s+(?:for\s+(?:work|a\s+living)|now)\b"
                                r"|\bwhat(?:'s|\u2019s|\s+is|\s+was)\s+my\s+job\b", _I),
              (("what do I do for work?", "user role"),), lambda m: ("user", ("role", "employer"))),
    AskedRule("what_noun_verb", re.compile(
        rf"\b(?:what|which)\s+{_NOUN}\s+(?:do|does|did|am|are|is|was|were|have|has)\s+{_WHO}\s+(?:\w+\s+)?"
        r"(?:have|had|got|drive|drove|driving|ride|riding|use|using|used|at|with|on|in|going|go|goes|went|own|owned"
        r"|work|working|bank|banking|see|seeing|take|taking|play|playing|signed)\b", _I),
        (("what car do I drive?", "user car"), ("which gym am I going to now", "user gym"),
         ("which company am I at", "user employer")), _what_verb_slot),
    AskedRule("how_much", re.compile(rf"\bhow\s+much\s+{_NOUN}\s+(?:am|do|did|should|was|is|are)\b", _I),
              (("How much Eltroxin am I meant to be taking now?", "user eltroxin"),),
              lambda m: ("user", (_head(m.group("noun")),))),
    AskedRule("noun_of_mine", re.compile(
        rf"\b(?:what|which)(?:'s|\u2019s|\s+is|\s+was|\s+are)\s+the\s+{_MOD}{_NOUN}\s+(?:on|of|for|at)\s+(?:{_POSS}\s+)?"
        r"(?:the\s+)?(?:current\s+|new\s+|old\s+)?[\w-]+", _I),
        (("What's the registration of my car?", "user license plate"),
         ("what's the number plate on the new car?", "user license plate")), _noun_slot),
    AskedRule("whose_noun", re.compile(
        rf"\b(?:what|who|which|where|when)(?:'s|\u2019s|\s+is|\s+was|\s+are|\s+were|'re)\s+{_POSS}\s+{_MOD}{_NOUN}"
        rf"{_END}", _I),
        (("who's my boss now?", "user manager"), ("what's my current address?", "user home"),
         ("what was Dana's phone number?", "dana phone number")), _noun_slot),
)


def asked_slot(text: str) -> AskedSlot | None:
    """The slot `text` asks, by the first rule that reads one, or None."""
    for rule in ASKED_RULES:
        m = rule.pattern.search(text)
        if m is None:
            continue
        found = rule.slot(m)
        if found is not None and found[1] and all(found[1]):
            return AskedSlot(found[0], found[1], rule.name)
    return None
