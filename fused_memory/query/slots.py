"""Slots: which attribute of which subject a memory states, and the values it states for it, read
from its text at write time.

A version of a fact is a newer value of the same slot: the same subject (the user, or a named
person) and the same attribute. "My manager is Priya Raman" and, later, "Since the reorg my manager
is Tomasz Nowak" both state ("user", "manager"); "I moved from Leeds to York" and "we moved from
York to Bristol" both state ("user", "home"), the second with the old value York and the new value
Bristol. The stage after fusion puts the newer first on a question about now and the one asked for
on a question about the past (`ensemble.versions`). A caller who knows the fact's key passes it as
`Memory.predicate`, and that always wins; for the memories written as people write them (no
predicate), the rules below read slots off the spaCy parse ingest already runs for entities
(`store.ingest`), so nothing is parsed twice.

Each rule (`SLOT_RULES`) is named, with the examples that made it, and reads one clause at a time
(sentences, and the clauses a comma or "and" opens). A rule reads a slot only where it is sure; a
memory none of whose clauses is read has no slot and is never a version of another. A question
saved as a memory ("where should we eat on Friday?") states no slot: a question is never a version
of a statement. Where a change names no attribute ("sold the Golf and bought a Zoe", "switched from
Spotify to Apple Music"), the products say it (`slot_vocab.product_kind`), or the slot is left
open and the change joins the memory that states its old value (`ensemble.versions`).

`SLOT_FIELD` is the metadata field the first derived key is stored under ("user manager"), and
`SLOTS_FIELD` every slot read with its values; `memory_slot` and `memory_slots` read them back (the
caller's predicate first).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from ..types import Memory
from .slot_changes import amount, dropped, employer, habit, lives, manager, moved, possession, renamed, role, switched
from .slot_rules import Clause, SlotFact, SlotRule, is_question, normalize_slot
from .slot_states import bare, drives, is_my, label, new_x, phone, possessive, the_x_is
from .slot_vocab import ATTRIBUTES, attribute

__all__ = ["SLOT_FIELD", "SLOTS_FIELD", "SlotFact", "SlotRule", "SLOT_RULES", "Clause", "slot_key", "slot_facts",
           "slot_from_tokens", "slot_facts_of", "memory_slot", "memory_slots", "normalize_slot", "facts_to_json",
           "is_question"]

#: The metadata field the first derived slot key is stored under ("user manager").
SLOT_FIELD = "slot"
#: The metadata field every derived slot is stored under, with its values:
#: [{"key": "user car", "new": ["toyota yaris"], "old": ["micra"]}] (`facts_to_json`).
SLOTS_FIELD = "slots"

#: The rules, in the order they are tried on each clause; the first that reads a slot wins the clause.
SLOT_RULES: tuple[SlotRule, ...] = (
    SlotRule("moved", (("We moved from York to Bristol.", "user home"), ("relocated to Pune yesterday", "user home"),
                       ("Caroline: I moved to Denver last year.", "caroline home")), moved),
    SlotRule("lives", (("I live in Lisbon.", "user home"), ("Now living in Amsterdam.", "user home"),
                       ("My parents live in Boulder.", "user parents home")), lives),
    SlotRule("possession", (("Sold the Golf and bought a Zoe.", "user car"),
                            ("bought the iphone 13 used on OLX", "user phone")), possession),
    SlotRule("switched", (("Switched car insurance to HUK.", "user car insurance"),
                          ("changed dentists", "user dentist"), ("upgraded to a MacBook Pro", "user laptop")),
             switched),
    SlotRule("employer", (("I left Initech and joined Hooli.", "user employer"),
                          ("first day at Kiezkraft, Senior UX", "user employer"),
                          ("Dana left Spotify and joined Klarna", "dana employer")), employer),
    SlotRule("manager", (("Reporting to Tom now.", "user manager"), ("Sam reports to Elena.", "sam manager")), manager),
    SlotRule("amount", (("rent goes to 1.010€ from July", "user rent"),
                        ("the landlord raised the rent to 1350", "user rent")), amount),
    SlotRule("renamed", (("Renamed the business to Lampejo Studio", "user business name"),), renamed),
    SlotRule("possessive", (("My manager is Priya Raman.", "user manager"),
                            ("Sam's new boss is Marcus.", "sam manager"),
                            ("My manager's manager is Sofia.", "user manager's manager")), possessive),
    SlotRule("is_my", (("Dr. Weber is my GP.", "user doctor"), ("New GP is Dr Anjali Rao", "user doctor")), is_my),
    SlotRule("label", (("phone number: 0176 9988 112", "user phone number"), ("wifi: AirFiber_704", "user wifi"),
                       ("bike: RE Classic 350", "user bike")), label),
    SlotRule("drives", (("I drive a 2015 Honda Civic.", "user car"), ("My wife drives a Mini.", "user wife car")),
             drives),
    SlotRule("role", (("Got promoted to Lead Designer", "user role"),
                      ("Yuki Kowalski is a site reliability engineer", "yuki kowalski role")), role),
    SlotRule("bare", (("Rent is 1200 euros a month.", "user rent"),
                      ("Car insurance is with Allianz.", "user car insurance")), bare),
    SlotRule("the_x_is", (("Since January, the CTO is Helena Sousa.", "user cto"),), the_x_is),
    SlotRule("habit", (("I play tennis on weekends.", "user play"), ("We pay for Netflix.", "user subscription"),
                       ("I no longer smoke, quit in January.", "user smoke")), habit),
    SlotRule("dropped", (("Cancelled Comcast, we have fiber from Sonic.", ""),), dropped),
    SlotRule("new_x", (("Ran my first half marathon, 21 km, new longest run.", "user longest run"),), new_x),
    SlotRule("phone", (("Call Ines Ivanova on +49 170 1234567", "ines ivanova phone number"),), phone),
)




# ---------------------------------------------------------------- reading a text
def slot_key(doc: Any) -> str | None:
    """The first slot key of a parsed text (a spaCy `Doc`; its tokens and entities are read), or
    None when no rule is sure (`slot_facts`)."""
    return next((f.key for f in slot_facts_of(doc) if f.key), None)


def slot_facts_of(doc: Any) -> tuple[SlotFact, ...]:
    """`slot_facts` of a parsed text (a spaCy `Doc`)."""
    tokens = [t.text for t in doc]
    kinds = [""] * len(tokens)
    for ent in doc.ents:
        for i in range(ent.start, ent.end):
            kinds[i] = ent.label_
    return slot_facts(tokens, kinds)


def slot_from_tokens(tokens: Sequence[str], kinds: Sequence[str]) -> str | None:
    """`slot_key` on a text's tokens and each token's entity label ("" for none)."""
    return next((f.key for f in slot_facts(tokens, kinds) if f.key), None)


def slot_facts(tokens: Sequence[str], kinds: Sequence[str], rules: Sequence[SlotRule] = SLOT_RULES
               ) -> tuple[SlotFact, ...]:
    """Every slot the text's clauses state, in the order they state them, one a clause and a key,
    read by `rules`; questions state none. A leading "Name:" speaker label makes Name the first person."""
    raw = [unicodedata.normalize("NFKC", t).replace("\u2019", "'") for t in tokens]
    words = [t.casefold() for t in raw]
    user, start = "user", 0
    speaker = _speaker(raw, kinds)
    if speaker is not None:
        user, start = speaker
    out: list[SlotFact] = []
    for lo, hi in _clauses(words, start):
        clause = Clause(tuple(raw[lo:hi]), tuple(words[lo:hi]), tuple(kinds[lo:hi]), user)
        if not clause.words or is_question(raw[lo:min(len(raw), hi + 1)]):
            continue
        for rule in rules:
            found = rule.read(clause)
            if found:
                for f in found:
                    _merge(out, f)
                break
    keyed = [f for f in out if f.key]
    loose = [f for f in out if not f.key and f.old]
    if len(keyed) == 1 and loose and all(f.subject == keyed[0].subject for f in loose):
        # "quit café pacheco ... starting internship at estúdio terra": what was given up is the
        # one slot's value before
        k = keyed[0]
        merged = SlotFact(k.subject, k.attribute, k.new, tuple(dict.fromkeys(k.old + tuple(v for f in loose
                                                                                           for v in f.old))), k.rule)
        out = [merged if f is k else f for f in out if f not in loose]
    return tuple(out)


def _merge(facts: list[SlotFact], fact: SlotFact) -> None:
    """Add `fact`, or fold its values into the fact of the same key already read from another clause
    ("the Octavia is gone, we're leasing a Cupra Born now": one car, old and new)."""
    for n, f in enumerate(facts):
        if f.key is not None and f.key == fact.key \
                or (not f.attribute and not fact.attribute and f.subject == fact.subject):
            facts[n] = SlotFact(f.subject, f.attribute or fact.attribute, tuple(dict.fromkeys(f.new + fact.new)),
                                tuple(dict.fromkeys(f.old + fact.old)), f.rule)
            return
    if fact.attribute or fact.new or fact.old:
        facts.append(fact)


def _clauses(words: Sequence[str], start: int) -> list[tuple[int, int]]:
    """Sentence spans (ends excluded), each cut again at a comma or semicolon that opens a new
    subject ("Sold the Civic, I now drive a Tesla")."""
    spans: list[tuple[int, int]] = []
    begin = start
    for i in range(start, len(words) + 1):
        if i == len(words) or words[i] in SENTENCE_END or (words[i] in (",", "—", "–", "-")
                                                             and i + 1 < len(words)
                                                             and words[i + 1] in ("i", "we", "my", "our", "now")):
            if i > begin:
                spans.append((begin, i))
            begin = i + 1
    return spans


#: What ends a sentence.
SENTENCE_END = frozenset(".!?;\n")

#: Labels that open a note and name no speaker.
_NOTE_LABELS = frozenset("note notes todo reminder update fyi ps edit important summary user me".split())
_NEW_WORDS = frozenset({"new", "changed", "updated", "current"})


def _speaker(tokens: Sequence[str], kinds: Sequence[str]) -> tuple[str, int] | None:
    """A leading "Name:" or "First Last:" speaker label (capitalized words, no change word): the
    speaker and where the utterance starts. "User:" and "Me:" (how agents store the user's turns)
    are the user. A chat log's turns are keyed by their speaker, never by the label as a slot."""
    for end in (1, 2):
        if len(tokens) > end + 1 and tokens[end] == ":":
            head = tokens[:end]
            first = head[0].casefold()
            if first in ("user", "me", "human"):
                return "user", end + 1
            named = all(t[:1].isupper() and t.replace("'", "").replace("-", "").isalpha() for t in head)
            if kinds[0] == "PERSON" or (named and first not in _NEW_WORDS | _NOTE_LABELS
                                        and attribute(" ".join(head).casefold()) not in ATTRIBUTES):
                return " ".join(head).casefold(), end + 1
            return None
    return None


# ---------------------------------------------------------------- what a stored memory holds
def facts_to_json(facts: Sequence[SlotFact]) -> list[dict[str, Any]]:
    """The slots as the payload keeps them (`SLOTS_FIELD`)."""
    return [{"key": f.key or "", "subject": f.subject, "new": list(f.new), "old": list(f.old)} for f in facts]


def memory_slot(m: Memory) -> str | None:
    """The memory's slot key: its predicate's (normalized) when given, else the first derived one in
    its metadata (`SLOT_FIELD`), else None."""
    if m.predicate is not None and m.predicate.strip():
        return normalize_slot(m.predicate) or None
    derived = m.metadata.get(SLOT_FIELD) if isinstance(m.metadata, Mapping) else None
    return normalize_slot(derived) or None if isinstance(derived, str) else None


def memory_slots(m: Memory) -> tuple[SlotFact, ...]:
    """Every slot the memory states: the caller's predicate alone when given (it names the fact;
    no values), else what ingest read (`SLOTS_FIELD`), else its first derived key without values."""
    if m.predicate is not None and m.predicate.strip():
        return (SlotFact("", normalize_slot(m.predicate), rule="predicate"),)
    stored = m.metadata.get(SLOTS_FIELD) if isinstance(m.metadata, Mapping) else None
    out: list[SlotFact] = []
    if isinstance(stored, (list, tuple)):  # a stored memory's metadata is frozen: tuples and read-only mappings
        for f in stored:
            if not isinstance(f, Mapping):
                continue
            key, subject = str(f.get("key") or ""), str(f.get("subject") or "user")
            attr = key[len(subject):].strip() if key.startswith(subject) else key
            out.append(SlotFact(subject, attr, tuple(str(v) for v in f.get("new") or ()),
                                tuple(str(v) for v in f.get("old") or ()), "stored"))
    if not out and stored is None:  # a memory written before slots were stored: its one key
        first = memory_slot(m)
        if first:
            out.append(SlotFact("", first, rule="stored"))
    return tuple(out)
