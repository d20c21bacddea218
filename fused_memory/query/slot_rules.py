"""What the slot rules share: the `SlotFact` a rule reads, the `Clause` it reads it from (with the
subject and value readers every rule uses), and the `SlotRule` that names a rule with its examples.
The rules themselves are in `slot_changes` (changes written as events) and `slot_states` (states
and labels); `slots` orders them and reads texts. See `slots` for what slots are for.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .slot_vocab import STATE_WORDS

__all__ = ["SlotFact", "SlotRule", "Clause", "is_question", "normalize_slot", "fact", "noun_phrase", "is_state",
           "DETERMINERS", "POSSESSIVE_1", "BE", "OPENERS", "ADVERBS", "STOP_VALUE"]

_SEPARATORS = re.compile(r"[\s_.\-]+")


def normalize_slot(text: str) -> str:
    """A key as versions compare it: NFKC, case-folded, `_` `-` `.` and spaces as one space."""
    return _SEPARATORS.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


@dataclass(frozen=True)
class SlotFact:
    """One slot a memory states: its subject ("user" or a name), its attribute ("" when the text
    names none and no product says it: the fact is then joined to another by its old value), the
    values it states now (`new`) and the values it says were before (`old`), and the rule that read it."""

    subject: str
    attribute: str
    new: tuple[str, ...] = ()
    old: tuple[str, ...] = ()
    rule: str = ""

    @property
    def key(self) -> str | None:
        return normalize_slot(f"{self.subject} {self.attribute}") if self.attribute else None


# ---------------------------------------------------------------- a clause, as the rules read it
_SENTENCE_END = frozenset(".!?;\n")
_FIRST_PERSON = frozenset({"i", "we"})
POSSESSIVE_1 = frozenset({"my", "our"})
BE = frozenset({"is", "are", "'s", "was"})
DETERMINERS = frozenset({"a", "an", "the", "my", "our", "his", "her", "their", "this", "that", "its", "some"})
STOP_VALUE = frozenset("""
to from for with at in on into by and but or so because since as of , . ! ? ; : - – — ( ) " ' now then today
yesterday tomorrow last next this which who that when where while after before until till instead also too due
""".split())
#: Verbs that end a value: "sold my old M1 to Tiago", "a MacBook Pro, sold the M1".
_VERBS_AFTER_VALUE = frozenset("sold bought got is are was were has have had went said".split())
#: What may open a clause before its subject without being one: "Since the reorg my manager is ...".
OPENERS = frozenset("since after as from in at on today now also then before until following with "
                     "starting effective".split())
ADVERBS = frozenset("now just finally recently also then since and so officially got already actually".split())
_NOT_SUBJECT_VERB = frozenset("and with told said says asked thinks think wants want me you i we she he they".split())
_QUESTION_WORDS = frozenset("what where when who whom whose which why how should shall could would can do does did "
                            "is are am will".split())


@dataclass(frozen=True)
class Clause:
    """One clause's tokens: as written (`raw`), case-folded (`words`), their entity labels (`kinds`,
    "" for none), and whose first person it is (`user`: "user", or a chat turn's speaker)."""

    raw: tuple[str, ...]
    words: tuple[str, ...]
    kinds: tuple[str, ...]
    user: str

    def find(self, *words: str, start: int = 0) -> int:
        """The first position at or after `start` holding one of `words`, or -1."""
        for i in range(start, len(self.words)):
            if self.words[i] in words:
                return i
        return -1

    def value(self, start: int, limit: int = 6) -> str | None:
        """The value that starts at `start`: a name, a number or a short noun phrase, up to the next
        preposition, conjunction or punctuation; determiners in front are dropped."""
        i = start
        while i < len(self.words) and self.words[i] in DETERMINERS:
            i += 1
        out: list[str] = []
        while i < len(self.words) and len(out) < limit and self.words[i] not in STOP_VALUE \
                and any(ch.isalnum() or ch in "$€£¥₹%" for ch in self.words[i]) \
                and self.words[i] not in _VERBS_AFTER_VALUE:
            out.append(self.words[i])
            i += 1
        text = " ".join(w for w in out if w not in ("new", "old", "used", "current", "own"))
        return text or None

    def subject(self, before: int) -> str | None:
        """Whose fact the verb at `before` states, read from the clause start: I/we (the user), my X
        (the user's X), a name, or nothing but adverbs (a note to self: the user)."""
        words, kinds = self.words, self.kinds
        lead = [w for w in words[:before] if w not in ADVERBS]
        if not lead:
            return self.user
        if lead[-1] in _FIRST_PERSON and "and" in words[:before] and len(lead) <= 3:
            return self.user  # "Júlia and I moved out", "Mike and I bought"
        if lead[0] in _FIRST_PERSON and all(w in _FIRST_PERSON | {"'ve", "have", "'m", "am", "no", "longer", "still",
                                                                   "now", "just", "'re", "are", "'d", "had", "were",
                                                                   "was", "finally", "both", "all"}
                                            for w in lead):
            return self.user
        if lead[0] in POSSESSIVE_1 and len(lead) <= 3:
            names = [w for w, k in zip(words[1:before], kinds[1:before], strict=False) if k == "PERSON"]
            if names:
                return names[0]
            noun = " ".join(lead[1:])
            return f"{self.user} {noun}" if noun and noun.replace(" ", "").isalpha() else None
        if kinds and kinds[0] == "PERSON":
            end = 0
            while end < before and kinds[end] == "PERSON":
                end += 1
            rest = [w for w in words[end:before] if w not in ADVERBS]
            name = " ".join(words[:end])
            if len(rest) <= 3 and not any(kinds[end:before]) and not set(rest) & _NOT_SUBJECT_VERB:
                return name
            if rest and rest[0] in ("left", "quit") and "and" in words[end:before]:
                return name
        if lead[0] in ("he", "she", "they"):
            return None
        return None


def is_question(raw: Sequence[str]) -> bool:
    """A clause that asks rather than states: it ends with "?", or opens with a question word and
    holds no full stop ("User: should I take the Denver client"): it states no slot."""
    words = [w.casefold() for w in raw if w.strip()]
    return bool(words) and (words[-1] == "?" or "?" in words[-3:])


# ---------------------------------------------------------------- the rules
Read = Callable[[Clause], "list[SlotFact]"]


@dataclass(frozen=True)
class SlotRule:
    """A named rule, the examples that made it (each keyed as the rule keys it), and how it reads a clause."""

    name: str
    examples: tuple[tuple[str, str], ...]
    read: Read


def fact(c: Clause, at: int, attr: str, new: Sequence[str | None] = (), old: Sequence[str | None] = (),
          rule: str = "") -> list[SlotFact]:
    subject = c.subject(at)
    if subject is None:
        return []
    return [SlotFact(subject, attr, tuple(v for v in new if v), tuple(v for v in old if v), rule)]


def is_state(word: str) -> bool:
    """Whether a word after "is" says how something is, not what it is: "gone", "not", "sticking
    again", "driving up" (an -ing form is something going on, not a value)."""
    return word in STATE_WORDS or word in ("not", "n't", "also", "still", "being") or \
        (word.endswith("ing") and len(word) > 5 and word not in ("morning", "evening", "building", "wedding"))


def noun_phrase(words: Sequence[str], kinds: Sequence[str], limit: int = 4, cut: bool = False) -> str | None:
    """A short common-noun phrase (cut at its first preposition), or None."""
    out: list[str] = []
    for w, k in zip(words, kinds, strict=False):
        if w in STOP_VALUE or (cut and w in ("now", ",")):
            break
        if k == "PERSON" or not (w.replace("'", "").replace("-", "").isalpha()) or (not out and w in DETERMINERS):
            return None
        if w in ("new", "current", "old", "previous", "former", "latest", "main", "usual"):
            continue
        out.append(w)
    if not out or len(out) > limit or out[-1] in ("'s", "'"):
        return None
    return " ".join(out).replace(" 's ", "'s ")


