"""Versions of one fact in a result, found by their slot, and put in order.

A version is a newer value of the same slot: the same subject and the same attribute
(`query.slots`: "user home", "dana employer"), read from the text at write time, or the caller's
predicate. Two memories of a result are versions of one fact when

* they have the same slot key and different texts, and they state other values: the newer names a
  value the older does not, says what the value was before (a change: "we moved from York to
  Bristol"), or one of them states no value ("changed dentists"). Two memories that state the same
  value ("I live in Bristol" / "Bristol is lovely, so glad I live here now") are one fact said
  twice, not a change: neither is superseded. Two memories with the caller's predicate need no value; or
* one states a change whose attribute no word names ("switched from Spotify to Apple Music",
  `slots.SlotFact.attribute` ""), of the subject of a keyed memory whose value it says was before
  ("Spotify is my music app"): it is that fact's newer version.

Similarity alone never makes versions: "Had lunch with Dana" is no newer version of "My sister Dana
got married in Porto", and a question ("Where should we eat on Friday?") states no slot, so it is
never a version of its answer. Groups are transitive and hold memories with a time only.

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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from ..query.slots import SLOT_FIELD, SLOTS_FIELD, SlotFact, memory_slots
from ..text import tokenize
from ..times import MemoryTimes
from ..types import Memory
from .candidate import Candidate, Groups

__all__ = ["MAX_VERSIONS", "Version", "values", "version_groups", "order_versions", "slot_of", "said_before",
           "same_value"]

_DAY_S = 86400.0
#: More versions than this in one result is a slot read too loosely (a topic): left in the fused order.
MAX_VERSIONS = 8


@dataclass(frozen=True)
class Version:
    """A group of versions (indices in rank order) and the slot key they share (None for a
    caller's predicate that differs only in how it is written, never in practice)."""

    members: tuple[int, ...]
    slot: str | None


def values(c: Candidate) -> frozenset[str]:
    """The values a candidate's memory states: the names it mentions, its tokens with a digit (as
    its payload keeps them, `Candidate.wording`), and the values its slots state now."""
    m = c.memory
    stated = {v.casefold() for f in memory_slots(m) for v in f.new}
    return frozenset(e.casefold() for e in m.entities) | c.wording().content.values | stated


def same_value(a: str, b: str) -> bool:
    """Two values name one thing: equal once tokenized, or one's words all in the other's
    ("Golf" / "the old VW Golf"; "Smart Fit" / "smart fit gym")."""
    return _same_words(frozenset(tokenize(a)), frozenset(tokenize(b)))


def _same_words(ta: frozenset[str], tb: frozenset[str]) -> bool:
    """`same_value` on values already tokenized: neither empty, one's words all in the other's."""
    return bool(ta and tb) and (ta <= tb or tb <= ta)


class _Read:
    """What the rules read of one candidate, once per query."""

    __slots__ = ("facts", "keys", "changes", "new", "old_keys", "epoch", "given")

    def __init__(self, m: Memory) -> None:
        self.facts: tuple[SlotFact, ...] = memory_slots(m)
        self.keys = frozenset(f.key for f in self.facts if f.key)
        self.changes = any(f.old for f in self.facts)  # it says what a value was before (`_linked`)
        # each key's values now, as word sets (`same_value` compares them), and the keys it says a
        # value of was before: read once per memory, not once per pair
        new: dict[str, list[frozenset[str]]] = {}
        for f in self.facts:
            if f.key:
                new.setdefault(f.key, []).extend(frozenset(tokenize(v)) for v in f.new)
        self.new = {k: tuple(v) for k, v in new.items()}
        self.old_keys = frozenset(f.key for f in self.facts if f.key and f.old)
        self.epoch = _epoch(m)
        self.given = bool(m.predicate and m.predicate.strip())  # the key is the caller's predicate


_READS: dict[tuple[object, ...], _Read] = {}


def _read(m: Memory) -> _Read:
    """What the rules read of `m`; memoized by id and the fields read (the next query reads many of
    the same candidates again)."""
    key = (m.namespace, m.id, m.text, m.predicate, repr(m.metadata.get(SLOTS_FIELD)), m.metadata.get(SLOT_FIELD),
           _epoch(m))
    hit = _READS.get(key)
    if hit is None:
        if len(_READS) > 20_000:
            _READS.clear()
        hit = _READS[key] = _Read(m)
    return hit


def _changed(a: _Read, b: _Read, key: str) -> bool:
    """Whether two memories of one slot state another value of it (see the module docstring)."""
    if a.given and b.given:
        return True
    new_a, new_b = a.new.get(key, ()), b.new.get(key, ())
    if key in a.old_keys or key in b.old_keys or not new_a or not new_b:
        return True
    return not any(_same_words(x, y) for x in new_a for y in new_b)


def _linked(change: _Read, keyed: _Read) -> str | None:
    """The key of `keyed` when `change` states, with no attribute named, that a value `keyed`
    states for its slot was before (same subject): "switched from Spotify to Apple Music" after
    "Spotify is my music app"."""
    for f in change.facts:
        if f.attribute or not f.old:
            continue
        for g in keyed.facts:
            if g.key and g.subject == f.subject and any(same_value(o, v) for o in f.old for v in g.new):
                return g.key
    return None


def version_groups(candidates: Sequence[Candidate], limit: int) -> list[Version]:
    """The groups of two or more versions among the first `limit` candidates (indices in rank
    order), by the rules of the module docstring."""
    n = min(limit, len(candidates))
    timed = [i for i in range(n) if MemoryTimes.of(candidates[i].memory).when is not None]
    read = {i: _read(candidates[i].memory) for i in timed}
    said = {i: candidates[i].wording().key for i in timed}  # the text as copies compare it
    groups_of = Groups(timed)
    slot: dict[int, str] = {}
    # only a memory with a slot key, or one stating a value that was before, can be a version: the
    # pairs below are those of these candidates, in the same order (most candidates state neither)
    able = [i for i in timed if read[i].keys or read[i].changes]
    for x, i in enumerate(able):
        for j in able[x + 1:]:
            a, b = read[i], read[j]
            if said[i] == said[j]:
                continue  # copies: collapse's
            shared = sorted(a.keys & b.keys)
            key = next((k for k in shared if _changed(a, b, k)), None)
            if key is None:
                older, newer = (a, b) if a.epoch <= b.epoch else (b, a)
                key = _linked(newer, older)
            if key is not None:
                groups_of.join(i, j)
                slot[i], slot[j] = slot.get(i, key), slot.get(j, key)
    groups: dict[int, list[int]] = {}
    for i in timed:
        groups.setdefault(groups_of.root(i), []).append(i)
    out = []
    for members in groups.values():
        if 1 < len(members) <= MAX_VERSIONS:
            keys = {slot[i] for i in members if i in slot}
            out.append(Version(tuple(members), keys.pop() if len(keys) == 1 else None))
    return sorted(out, key=lambda g: g.members[0])


def slot_of(m: Memory) -> frozenset[str]:
    """The slot keys `m` states (its predicate's, or those read from its text)."""
    return _read(m).keys


def said_before(m: Memory, keys: frozenset[str]) -> bool:
    """Whether `m` states a change of one of the slots `keys` that names the value before ("left
    Initech and joined Hooli": Initech was the employer before)."""
    return any(f.key in keys and f.old for f in _read(m).facts)


def _target(members: list[int], candidates: Sequence[Candidate], query_words: frozenset[str],
            before: datetime | None) -> int | None:
    """The version a question about an earlier value asks for (members newest first)."""
    for pos, i in enumerate(members):  # "before Tom": the version just older than the one naming Tom
        named = {v for v in values(candidates[i]) if set(tokenize(v)) & query_words}
        if named and pos + 1 < len(members):
            return members[pos + 1]
    if before is not None:  # "in 2024": the version in effect when the window ended
        for i in members:
            when = MemoryTimes.of(candidates[i].memory).when
            if when is not None and when <= before.timestamp():
                return i
        return None
    return members[1]


def order_versions(candidates: Sequence[Candidate], groups: Iterable[Version], *, past: bool = False,
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
        # a member that states the current value again ("camila will be my supervisor", then "first week
        # with camila as my boss") is not stale: ordered with the others, never marked superseded
        stale = [i for i in newest_first[1:] if not _restates(candidates[i].memory, current, group.slot)]
        older = tuple(candidates[i].memory.id for i in stale)
        days = tuple(round((_epoch(current) - _epoch(candidates[i].memory)) / _DAY_S, 1) for i in stale)
        for place, i in zip(sorted(group.members), order, strict=True):
            c, score = candidates[i], candidates[place].score  # each takes the score of the place it lands at
            if c.memory.id == current.id:
                out[place] = replace(c, score=score, supersedes=older, version_slot=group.slot, older_by_days=days)
            elif i in stale:
                out[place] = replace(c, score=score, superseded_by=current.id, version_slot=group.slot)
            else:
                out[place] = replace(c, score=score, version_slot=group.slot)
    return out


def _restates(m: Memory, current: Memory, slot: str | None) -> bool:
    """Whether `m` states, for `slot`, a value the current version states too."""
    if slot is None:
        return False
    mine = [v for f in _read(m).facts if f.key == slot for v in f.new]
    now = [v for f in _read(current).facts if f.key == slot for v in f.new]
    return any(same_value(a, b) for a in mine for b in now)


def _epoch(m: Memory) -> float:
    when = MemoryTimes.of(m).when
    return when if when is not None else -math.inf
