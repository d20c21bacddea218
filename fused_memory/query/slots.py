"""Slot keys: which fact of which subject a memory states, read from its text at write time.

Two statements about one slot of one subject are versions of one fact ("My manager is Priya Raman"
and, later, "Since the reorg my manager is Tomasz Nowak": both ("user", "manager")), and the stage
after fusion puts the newer first on a question about now (`ensemble.recency.supersede`). A caller
who knows the fact's key passes it as `Memory.predicate`, and that always wins; for the memories
written as people write them (no predicate), `slot_key` derives one with conservative rules on the
tokens and entities of the spaCy parse ingest already runs for entities (`store.ingest`), so nothing
is parsed twice. A key is given only where a rule is sure; a memory without one is never superseded
by rule (the stage may still group it with a near-identical memory, `ensemble.recency.version_groups`).

The rules, on each sentence (a leading "Name:" speaker label makes Name the first person):

* possessive: "my/our X is|are|: ...", "Name's X is ..." -> (user | Name, X); "the X is ..." at a
  clause start -> (user, X); "Dr. Weber is my GP" -> (user, GP)
* label: "X: ..." / "New X: ..." opening the text -> (user, X) ("New phone number: 0176 ...")
* change verbs: "changed|switched|updated (my|the) X to ..." -> (user, X)
* cue verbs, with the clause's subject (I/we, my X, a name, or none: a note to self):
  live(s)/living in, moved/relocated/moving to, based in, settled in -> home;
  work(s)/working at|for, joined, started at, employed by, is/now at <organization> -> employer;
  report(s)/reporting to -> manager; drive(s)/driving -> car
* a bare "X is|are ..." opening a sentence, X one or two words and no name -> (user, X)

X is cut at its first preposition ("plate after the move" -> "plate"), loses "new", "current",
"old"..., and a few synonyms are folded ("boss" -> "manager", "GP" -> "doctor"). "My manager's
manager is Sofia" keys "manager's manager", "My parents live in Boulder" ("user parents", "home"):
another subject, not a version of "I live in Denver".

`SLOT_FIELD` is the metadata field the derived key is stored under (the payload keeps it, so it
needs no new column); `memory_slot` reads a memory's key: its predicate's, else the derived one.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from ..types import Memory

__all__ = ["SLOT_FIELD", "slot_key", "slot_from_tokens", "memory_slot", "normalize_slot"]

#: The metadata field a derived slot key is stored under ("user manager").
SLOT_FIELD = "slot"

_SEPARATORS = re.compile(r"[\s_.\-]+")
_SENTENCE_END = frozenset(".!?;")
_FIRST_PERSON = frozenset({"i", "we"})
_POSSESSIVE_1 = frozenset({"my", "our"})
_BE = frozenset({"is", "are", "'s", "\u2019s"})
_PREPOSITIONS = frozenset("on of after for in at from with to by about since before during".split())
_DROP = frozenset("new current old previous former latest main usual".split())
_SYNONYMS = {"boss": "manager", "gp": "doctor", "number": "phone number", "mobile number": "phone number",
             "plate": "license plate", "favourite": "favorite", "job title": "role", "title": "role",
             "home address": "address", "editors": "editor", "home city": "home"}
#: Words that open a clause and are no subject noun ("This is...", "It's...", "What is...").
_NOT_NOUN = frozenset("""
i we you he she they it this that these those there here what which who whom whose where when why how
everything something nothing anything everyone someone all some any each both either neither one
a an the my our your his her their its me us them him not no yes so and but or if then also just
today tonight tomorrow yesterday now still never always really very too
""".split())
#: Tokens that may stand before a cue verb in a note to self ("Now living in Amsterdam").
_ADVERBS = frozenset("now just finally recently also then since and so officially got".split())
_CUES: tuple[tuple[tuple[str, ...], tuple[str, ...], str], ...] = (
    (("live", "lives", "living"), ("in",), "home"),
    (("moved", "relocated", "moving", "relocating"), ("to",), "home"),
    (("based", "settled"), ("in",), "home"),
    (("work", "works", "working"), ("at", "for"), "employer"),
    (("started",), ("at",), "employer"),
    (("employed",), ("by",), "employer"),
    (("joined",), (), "employer"),
    (("report", "reports", "reporting"), ("to",), "manager"),
    (("job", "position"), ("at", "with"), "employer"),
    (("reached",), ("at", "on"), "phone number"),
    (("became", "become", "becomes"), (), "role"),
    (("promoted",), ("to",), "role"),
    (("works", "working", "work"), ("as",), "role"),
    (("drive", "drives", "driving"), (), "car"),
)
_CHANGE = frozenset({"changed", "switched", "updated"})
#: Words between a name and a cue that make the name no subject of it ("Ana and I moved to",
#: "Sarah told me she moved to").
_NOT_SUBJECT_VERB = frozenset("and with told said says asked thinks think wants want me you i we she he they".split())

def normalize_slot(text: str) -> str:
    """A key as supersession compares it: NFKC, case-folded, `_` `-` `.` and spaces as one space."""
    return _SEPARATORS.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()

def memory_slot(m: Memory) -> str | None:
    """The memory's slot key: its predicate's (normalized) when given, else the derived one in its
    metadata (`SLOT_FIELD`), else None."""
    if m.predicate is not None and m.predicate.strip():
        return normalize_slot(m.predicate) or None
    derived = m.metadata.get(SLOT_FIELD) if isinstance(m.metadata, dict) or hasattr(m.metadata, "get") else None
    return normalize_slot(derived) or None if isinstance(derived, str) else None

def slot_key(doc: Any) -> str | None:
    """The slot key of a parsed text (a spaCy `Doc`; its tokens and entities are read), or None when
    no rule is sure. See the module docstring for the rules."""
    tokens = [t.text for t in doc]
    kinds = [""] * len(tokens)
    for ent in doc.ents:
        for i in range(ent.start, ent.end):
            kinds[i] = ent.label_
    return slot_from_tokens(tokens, kinds)

def slot_from_tokens(tokens: Sequence[str], kinds: Sequence[str]) -> str | None:
    """`slot_key` on a text's tokens and each token's entity label ("" for none)."""
    words = [unicodedata.normalize("NFKC", t).casefold().replace("\u2019", "'") for t in tokens]
    user, start = "user", 0
    speaker = _speaker(tokens, kinds)
    if speaker is not None:  # "Caroline: I moved to ...": the first person is Caroline
        user, start = speaker

    label = _label(words, kinds, start)
    if label is not None:
        return _key(user, label)
    begin = start
    for i in range(start, len(words) + 1):
        if i == len(words) or words[i] in _SENTENCE_END:
            found = _sentence(words[begin:i], list(kinds[begin:i]), user, tokens[begin:i])
            if found is not None:
                return found
            begin = i + 1
    return None

def _key(subject: str, slot: str) -> str | None:
    slot = " ".join(_SYNONYMS.get(w, w) if w == "favourite" else w for w in slot.split() if w not in _DROP)
    slot = _SYNONYMS.get(slot, slot)
    if not slot or not subject:
        return None
    return normalize_slot(f"{subject} {slot}")

def _noun(words: Sequence[str], kinds: Sequence[str], limit: int = 4) -> str | None:
    """A short common-noun phrase (cut at its first preposition), or None."""
    out: list[str] = []
    for w, k in zip(words, kinds, strict=False):
        if w in _PREPOSITIONS:
            break
        if k == "PERSON" or not (w.replace("'", "").isalpha()) or (not out and w in _NOT_NOUN):
            return None
        out.append(w)
    if not out or len(out) > limit or out[-1] in ("'s", "'"):
        return None
    return " ".join(out).replace(" 's ", "'s ")

#: Labels that open a note and name no speaker.
_NOTE_LABELS = frozenset("note notes todo reminder update fyi ps edit important summary".split())

def _speaker(tokens: Sequence[str], kinds: Sequence[str]) -> tuple[str, int] | None:
    """A leading "Name:" or "First Last:" speaker label (capitalized words, no change word): the
    speaker and where the utterance starts. A chat log's turns are keyed by their speaker, never
    by the label as a slot (which would make every turn of one speaker a version of the others)."""
    for end in (1, 2):
        if len(tokens) > end + 1 and tokens[end] == ":":
            head = tokens[:end]
            named = all(t[:1].isupper() and t.replace("'", "").replace("-", "").isalpha() for t in head)
            if kinds[0] == "PERSON" or (named and head[0].casefold() not in _NEW_WORDS | _NOTE_LABELS):
                return " ".join(head).casefold(), end + 1
            return None
    return None

_NEW_WORDS = frozenset({"new", "changed", "updated", "current"})

def _label(words: Sequence[str], kinds: Sequence[str], start: int) -> str | None:
    """"New phone number: 0176 ..." / "Changed GP: ..." opening the text -> the label (a bare
    one-word "Office: building C" reads as a speaker label, `_speaker`)."""
    try:
        colon = words.index(":", start)
    except ValueError:
        return None
    if not 0 < colon - start <= 5:
        return None
    head = list(words[start:colon])
    if any(k in ("PERSON",) for k in kinds[start:colon]):
        return None
    if head[0] in _CHANGE:  # "Changed GP: it's Dr. Klein now."
        head = head[1:]
    return _noun(head, kinds[start + colon - len(head):colon]) if head else None

def _subject(words: Sequence[str], kinds: Sequence[str], user: str, before: int) -> str | None:
    """The subject of a cue verb at `before`, read from the clause start: I/we (the user), my X
    (the user's X), a name, or nothing but adverbs (a note to self: the user)."""
    clause = max((i + 1 for i, w in enumerate(words[:before]) if w == ","), default=0)
    if clause:  # "Sold the Civic, I now drive a Tesla": the clause's own subject
        words, kinds, before = words[clause:], kinds[clause:], before - clause
    lead = [w for w in words[:before] if w not in _ADVERBS]
    if not lead:
        return user
    if lead[0] in _FIRST_PERSON and all(w in _FIRST_PERSON | {"'ve", "have", "'m", "am", "no", "longer",
                                                               "still", "now", "just"} for w in lead):
        return user
    if lead[0] in _POSSESSIVE_1 and len(lead) <= 3:
        names = [w for w, k in zip(words[1:before], kinds[1:before], strict=False) if k == "PERSON"]
        if names:
            return names[0]
        noun = _noun(lead[1:], [""] * (len(lead) - 1), limit=2)
        return f"{user} {noun}" if noun else None
    if kinds[0] == "PERSON":
        end = 0
        while end < before and kinds[end] == "PERSON":
            end += 1
        rest = [w for w in words[end:before] if w not in _ADVERBS]
        name = " ".join(words[:end])
        # "Dana joined", "Victor was promoted", "Marco took a job at", "Dana left Spotify and joined"
        if len(rest) <= 3 and not any(k for k in kinds[end:before]) and not set(rest) & _NOT_SUBJECT_VERB:
            return name
        if rest and rest[0] == "left" and "and" in words[end:before]:
            return name
    return None

def _sentence(words: list[str], kinds: list[str], user: str, raw: Sequence[str]) -> str | None:
    n = len(words)
    for i, w in enumerate(words):
        # "my/our X is ...", "Name's X is ..."
        if w in _POSSESSIVE_1 or (w in ("'s", "'") and i > 0 and kinds[i - 1] == "PERSON"):
            owner = user
            if w not in _POSSESSIVE_1:
                j = i - 1
                while j > 0 and kinds[j - 1] == "PERSON":
                    j -= 1
                owner = " ".join(words[j:i])
            for j in range(i + 2, min(n, i + 7)):
                if words[j] in _BE or words[j] == ":":
                    if words[j] in ("'s",) and j + 1 < n and words[j + 1] not in ("a", "an", "the"):
                        # "my manager's manager is": the possessive is part of the slot
                        continue
                    noun = _noun(words[i + 1:j], kinds[i + 1:j])
                    if noun is not None:
                        return _key(owner, noun)
                    break
        # "the X is ..." at a clause start
        if w == "the" and (i == 0 or words[i - 1] == ","):
            for j in range(i + 2, min(n, i + 5)):
                if words[j] in _BE:
                    noun = _noun(words[i + 1:j], kinds[i + 1:j], limit=3)
                    return _key(user, noun) if noun is not None else None
        # "Dr. Weber is my GP", "Mrs. Braun is the landlord now"
        if w in ("is",) and i > 0 and kinds[i - 1] and i + 2 <= n and words[i + 1] in ("my", "our", "the"):
            rest = [x for x in words[i + 2:] if x not in ("now", ",")]
            noun = _noun(rest, [""] * len(rest), limit=2) if rest else None
            if noun is not None and words[i + 1] != "the" or (noun and len(rest) <= 2):
                return _key(user, noun or "")
        # "Yuki Kowalski is a site reliability engineer", "I'm a senior engineer" -> role
        if w in ("is", "'m", "am") and i + 1 < n and words[i + 1] in ("a", "an") and i + 2 < n \
                and words[i + 2] not in ("lot", "bit", "little", "few", "big", "huge", "fan", "member", "part"):
            lead = words[:i]
            if w == "is" and lead and all(k == "PERSON" for k in kinds[:i]):
                return _key(" ".join(lead), "role")
            if w != "is" and lead == ["i"]:
                return _key(user, "role")
        # "VS Code is Sarah Silva's main editor."
        if w in ("'s", "'") and i > 0 and kinds[i - 1] == "PERSON" and "is" in words[:i]:
            j = i - 1
            while j > 0 and kinds[j - 1] == "PERSON":
                j -= 1
            if j > 0 and words[j - 1] == "is":
                noun = _noun(words[i + 1:], kinds[i + 1:], limit=3)
                if noun is not None:
                    return _key(" ".join(words[j:i]), noun)
        # "Call Ines Ivanova on +49 ...", "... has a new phone number: ..."
        if w == "call" and i + 1 < n and kinds[i + 1] == "PERSON":
            j = i + 1
            while j < n and kinds[j] == "PERSON":
                j += 1
            if j < n and words[j] in ("on", "at") and any(ch.isdigit() for x in words[j + 1:] for ch in x):
                return _key(" ".join(words[i + 1:j]), "phone number")
        if w == "new" and i > 0 and ":" in words[i + 1:i + 5]:
            colon = words.index(":", i + 1)
            noun = _noun(words[i + 1:colon], kinds[i + 1:colon], limit=3)
            subject = _subject(words, kinds, user, i - (1 if words[i - 1] in ("a", "an") else 0))
            if noun is not None and subject is not None:
                return _key(subject, noun)
        # "changed/switched my X to ..."
        if w in _CHANGE:
            try:
                to = words.index("to", i + 1)
            except ValueError:
                to = -1
            if 0 < to - i <= 5:
                span = [x for x in words[i + 1:to] if x not in ("my", "our", "the", "their", "his", "her")]
                noun = _noun(span, [""] * len(span), limit=3) if span else None
                if noun is not None and _subject(words, kinds, user, i) is not None:
                    return _key(_subject(words, kinds, user, i) or user, noun)
        for verbs, preps, slot in _CUES:
            if w not in verbs:
                continue
            nxt = words[i + 1] if i + 1 < n else ""
            if preps and nxt not in preps:
                continue
            named = i + 1 < n and (kinds[i + 1] == "ORG" or raw[i + 1][:1].isupper())
            if not preps and slot == "employer" and not named:
                continue
            subject = _subject(words, kinds, user, i)
            if subject is not None:
                return _key(subject, slot)
        if w in ("at",) and i > 0 and words[i - 1] in ("is", "now") and i + 1 < n and kinds[i + 1] == "ORG":
            subject = _subject(words, kinds, user, i - 1) if words[i - 1] == "is" else user
            if subject is not None:
                return _key(subject, "employer")
    # a bare "X is|are ..." opening the sentence: "Rent is 1200 euros a month."
    for j in (1, 2):
        if j < n and words[j] in ("is", "are") and not any(kinds[:j]):
            noun = _noun(words[:j], kinds[:j], limit=2)
            if noun is not None:
                return _key(user, noun)
    return None
