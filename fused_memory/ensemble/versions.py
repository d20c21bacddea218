"""Versions of one fact in a result, found by their relation to each other, and put in order.

Two memories of a result are versions of one fact when

* they have the same slot key (`query.slots.memory_slot`: the caller's predicate, else the key
  derived from the text at write time, "user manager") and different texts, and (for a derived
  key) the newer states a new value (below); or
* one has a key, the other none, and the keyless one names the key's slot in its words and a
  value the other does not ("The landlord raised the rent to 1350" beside "Rent is 1200 euros a
  month": slot "rent", new value "1350"); or
* neither has a key, their stored vectors have a cosine of at least `FusionConfig.version_cosine`,
  they do not say the same thing (`duplicates.same_content`: copies are collapse's), and the newer
  names a value the older does not ("Dana left Spotify and joined Klarna" / "Dana works at
  Spotify": "Klarna").

A value is a name the memory mentions (its entities) or a token with a digit. A keyed memory is
never joined by similarity to a keyless one that does not name its slot: "Lena visited Copenhagen
for a weekend" is not a version of "Lena lives in Hamburg", though they are about as alike as the
versions of most facts (MiniLM cosines of versions and of such bystanders overlap on the update
set: 0.3-0.75 both), which is why a version must be told by its relation, not by its distance.
Groups are transitive (a ~ b, b ~ c: one group) and hold memories with a time only.

Why not by distance to the query: the recency list used to order the candidates within a band of
the best match, and the newer version, worded differently, fell outside it, so the signal meant to
prefer the new value boosted the stale one alone in the band. Now the recency list holds only
memories that have another version in the result (`recency.add_recency(among=...)`): a memory with
none gets no recency boost at all.

Order (`order_versions`): on a question about now, the newest version takes the best place the
group holds, the next newest the next, and so on (every other hit keeps its place). On a question
about an earlier value (`query.cues.asks_past`: "before", "used to", "previous", "formerly",
"until", or a window that ended before today) the version asked for comes first: the one just older
than a version the question names ("who was my manager before Tom?"), else the one in effect at
the window's end ("what was my laptop in 2024?"; none then: the fused order stands), else the one
before the newest.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np

from ..query.slots import SLOT_FIELD, memory_slot
from ..text import tokenize
from ..types import Memory
from .candidate import Candidate, Groups, memory_time, text_key
from .duplicates import Content, VectorRead, alike_pairs, content, same_content

__all__ = ["MAX_VERSIONS", "Version", "values", "version_groups", "near_versions", "order_versions",
           "named_subject"]

_DAY_S = 86400.0
_READS: dict[tuple[object, ...], _Read] = {}
#: A chat log's turn opens with its speaker ("Caroline: ..."). Turns restate and riff on a topic, so
#: two alike turns with a new value are a conversation going on, not a fact that changed: on public
#: LoCoMo, ordering them newest first cost adversarial questions 3.4 points of R@5, and a turn
#: naming another turn's slot ("family") with a new name 0.4 more. Turns are versions by equal slot
#: keys only.
_TURN = re.compile(r"^\s*[A-Z][\w'.-]{1,40}(?:\s[A-Z][\w'.-]{1,40})?:\s")
#: A larger group is a topic, not one fact's versions (similar memories chained pair by pair): it is
#: left in the fused order.
MAX_VERSIONS = 4


@dataclass(frozen=True)
class Version:
    """How a group of versions was found: its slot key, or None when by similarity."""

    members: tuple[int, ...]
    slot: str | None


def values(m: Memory) -> frozenset[str]:
    """The values a memory states: the names it mentions and its tokens with a digit."""
    return frozenset(e.casefold() for e in m.entities) | content(m.text).values


#: Words with which people state that something changed ("switched to", "no longer", "instead",
#: "moved", "now"...): a newer memory that says one states a new value even when it names none.
_CHANGE = re.compile(
    r"(?<!\w)(?:now|switched|switching|instead|no\s+longer|any\s?more|gave\s+up|dropped|quit|replaced|changed"
    r"|cancell?ed|upgraded|moved|relocated|since|these\s+days|new\s+\w+\s*:)(?!\w)", re.IGNORECASE)


class _Read:
    """What the rules read of one candidate, read once per query. The words, values and negations
    (~25 us of a memory's ~35) are read when a rule first asks for them: most pairs are settled
    before (equal texts, other subjects, a turn of a chat log), so most candidates never need them."""

    __slots__ = ("slot", "text", "epoch", "subject", "given", "turn", "_text", "_entities", "_said", "_values",
                 "_change")

    def __init__(self, m: Memory) -> None:
        self.slot = memory_slot(m)
        self.text = text_key(m.text)
        self.epoch = _epoch(m)
        self.subject = m.entities[0].casefold() if m.entities else None  # people write the subject first
        self.given = bool(m.predicate and m.predicate.strip())  # the key is the caller's predicate
        self.turn = _TURN.match(m.text) is not None  # a turn of a chat log: never a version by similarity
        self._text, self._entities = m.text, m.entities  # not the memory: the memo holds up to 20k of these
        self._said: Content | None = None
        self._values: frozenset[str] | None = None
        self._change: bool | None = None

    @property
    def said(self) -> Content:
        if self._said is None:  # two threads may both read it: the same value either way
            self._said = content(self._text)
        return self._said

    @property
    def values(self) -> frozenset[str]:
        if self._values is None:
            self._values = frozenset(e.casefold() for e in self._entities) | self.said.values
        return self._values

    @property
    def words(self) -> frozenset[str]:
        return self.said.words

    @property
    def change(self) -> bool:
        if self._change is None:
            self._change = _CHANGE.search(self._text) is not None
        return self._change


def _read(m: Memory) -> _Read:
    """What the rules read of `m`; memoized by id and the fields read (a query reads the same
    candidates for its groups and its near-versions, and the next query many of them again)."""
    key = (m.namespace, m.id, m.text, m.predicate, m.metadata.get(SLOT_FIELD), m.entities, _epoch(m))
    hit = _READS.get(key)
    if hit is None:
        if len(_READS) > 20_000:
            _READS.clear()
        hit = _READS[key] = _Read(m)
    return hit


def _same_subject(a: _Read, b: _Read) -> bool:
    """Two memories that both name someone or something name the same first: "Met Ethan Chen in
    Lisbon" is no version of "Met Jonas Kowalski in Lisbon", however alike."""
    return a.subject is None or b.subject is None or a.subject == b.subject


def named_subject(candidates: Sequence[Candidate], group: Version) -> bool:
    """Whether every member of `group` names someone or something (its subject): versions found by
    similarity alone are a weaker sign when no member names whose fact it is (a person, a thing, or
    the speaker: "I", "my")."""
    return all(_read(candidates[i].memory).subject is not None or _FIRST_PERSON.search(candidates[i].memory.text)
               for i in group.members)


#: The speaker's own facts ("I drive a Civic", "my rent is..."): the user is their subject.
_FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|we|us|our)\b", re.IGNORECASE)


def _new_value(older: _Read, newer: _Read) -> bool:
    """The newer states another value: a name or number the older does not, another number of
    negations ("I no longer smoke" after "I smoke"), or a word of change ("switched", "instead")."""
    return bool(newer.values - older.values) or newer.said.negations != older.said.negations or newer.change


def _names_slot(m: _Read, slot: str) -> bool:
    """Whether a keyless memory names a keyed one's slot: every content word of the slot ("user
    rent" -> "rent"; a named subject's words too, "dana employer" -> "dana", "employer") is among
    the memory's words."""
    words = tokenize(slot)
    if words and words[0] == "user":
        words = words[1:]
    return bool(words) and set(words) <= m.words


def version_groups(candidates: Sequence[Candidate], vectors: Mapping[str, np.ndarray] | VectorRead | None,
                   cosine: float | None, limit: int) -> list[Version]:
    """The groups of two or more versions among the first `limit` candidates (indices in rank
    order), by the rules of the module docstring; `vectors` (stored vectors, or a function that
    reads them) are read only when two keyless candidates could be versions by the words."""
    n = min(limit, len(candidates))
    timed = [i for i in range(n) if memory_time(candidates[i].memory) is not None]
    read = {i: _read(candidates[i].memory) for i in timed}
    groups_of = Groups(timed)

    unkeyed_pairs: list[tuple[int, int]] = []
    for x, i in enumerate(timed):
        for j in timed[x + 1:]:
            a, b = read[i], read[j]
            if a.text == b.text:
                continue  # copies: collapse's
            older, newer = (a, b) if a.epoch <= b.epoch else (b, a)
            if a.slot is not None and a.slot == b.slot:
                if (a.given and b.given) or _new_value(older, newer):  # a caller's key needs no value
                    groups_of.join(i, j)
            elif (a.slot is None) != (b.slot is None):
                keyless = b if a.slot is not None else a
                # each condition is pure: the cheap checks go first, the words and values last
                if not (a.turn or b.turn) and _names_slot(keyless, a.slot or b.slot or "") \
                        and _new_value(older, newer):
                    groups_of.join(i, j)
                elif keyless is newer and cosine is not None and not (a.turn or b.turn) and _same_subject(a, b) \
                        and newer.change:
                    unkeyed_pairs.append((i, j))  # "Cancelled Comcast, we have fiber from Sonic"
            elif a.slot is None and cosine is not None and not (a.turn or b.turn) and _same_subject(a, b) \
                    and _new_value(older, newer) and not same_content(a.said, b.said):
                unkeyed_pairs.append((i, j))
    if vectors is not None:
        for i, j in alike_pairs(candidates, unkeyed_pairs, vectors, cosine or 1.0):
            groups_of.join(i, j)
    groups: dict[int, list[int]] = {}
    for i in timed:
        groups.setdefault(groups_of.root(i), []).append(i)
    out = []
    for members in groups.values():
        if 1 < len(members) <= MAX_VERSIONS:
            keys = {read[i].slot for i in members if read[i].slot is not None}
            out.append(Version(tuple(members), keys.pop() if len(keys) == 1 else None))
    return sorted(out, key=lambda g: g.members[0])


def _target(members: list[int], candidates: Sequence[Candidate], query_words: frozenset[str],
            before: datetime | None) -> int | None:
    """The version a question about an earlier value asks for (members newest first)."""
    for pos, i in enumerate(members):  # "before Tom": the version just older than the one naming Tom
        named = values(candidates[i].memory) & query_words
        if named and pos + 1 < len(members):
            return members[pos + 1]
    if before is not None:  # "in 2024": the version in effect when the window ended
        for i in members:
            when = memory_time(candidates[i].memory)
            if when is not None and when <= before:
                return i
        return None
    return members[1]


def order_versions(candidates: Sequence[Candidate], groups: Sequence[Version], *, past: bool = False,
                   query_words: frozenset[str] = frozenset(), before: datetime | None = None) -> list[Candidate]:
    """Each group's members in the places the group holds: newest first, or (`past`) the version
    the question asks for first and the rest newest first. The newest lists the others in
    `supersedes` (with their slot and how much older each is), each other names it in
    `superseded_by`; every candidate outside a group keeps its place."""
    out = list(candidates)
    for group in groups:
        newest_first = sorted(group.members, key=lambda i: (-_epoch(candidates[i].memory), i))
        order = list(newest_first)
        if past:  # the version asked for first; none in effect then: the fused order stands
            target = _target(newest_first, candidates, query_words, before)
            order = [target, *[i for i in newest_first if i != target]] if target is not None else sorted(group.members)
        current = candidates[newest_first[0]].memory
        older = tuple(candidates[i].memory.id for i in newest_first[1:])
        days = tuple(round((_epoch(current) - _epoch(candidates[i].memory)) / _DAY_S, 1) for i in newest_first[1:])
        for place, i in zip(sorted(group.members), order, strict=True):
            c = candidates[i]
            if c.memory.id == current.id:
                out[place] = replace(c, supersedes=older, version_slot=group.slot, older_by_days=days)
            else:
                out[place] = replace(c, superseded_by=current.id, version_slot=group.slot)
    return out


def _epoch(m: Memory) -> float:
    when = memory_time(m)
    return when.timestamp() if when is not None else -math.inf


def near_versions(candidates: Sequence[Candidate], among: Sequence[int],
                  vectors: Mapping[str, np.ndarray] | VectorRead | None, cosine: float | None) -> set[int]:
    """Those of `among` (the candidates about as relevant as the best match) that have another of
    them alike enough to be a version by its words (same first name or none, stored vectors at
    least `cosine` alike, other content), though no value tells it: the recency list may order
    them ("Yuki Kowalski became engineering manager" / "... is a site reliability engineer"),
    but supersession, which marks one stale, waits for a value. A candidate with none gets no
    recency."""
    if cosine is None or len(among) < 2:
        return set()
    timed = [i for i in among if memory_time(candidates[i].memory) is not None]
    read = {i: _read(candidates[i].memory) for i in timed}
    pairs = [(i, j) for x, i in enumerate(timed) for j in timed[x + 1:]
             if read[i].text != read[j].text and _same_subject(read[i], read[j]) and not (read[i].turn or read[j].turn)
             and not same_content(read[i].said, read[j].said)]
    if vectors is None:
        return set()
    return {x for pair in alike_pairs(candidates, pairs, vectors, cosine) for x in pair}
