"""Alias rules both graph backends share: which names are one entity, and an entity's public view.

Split from `traversal.py` because it is a separate concern: that module scores and walks the
graph; this one only decides, over a small read interface (`CatalogView`), how new names join or
start entity groups, so both backends merge "Sarah" into "Sarah Chen" the same way.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from ...text import normalize_entity_id
from ...types import Entity

__all__ = ["person_like", "name_tokens", "name_parts", "build_entity", "CatalogView", "NewEntity", "EntityPlan",
           "plan_entities"]

_PERSON_KINDS = frozenset({"PERSON", "PER"})


def person_like(kind: str | None) -> bool:
    """Unknown kinds count: a mention without an NER label may well be a person."""
    return kind is None or kind.upper() in _PERSON_KINDS


def name_tokens(entity_id: str) -> list[str]:
    return entity_id.split(" ")


def name_parts(entity_id: str) -> tuple[str, str] | None:
    """The first and last token of a multi-token name that could be a person's, else None.

    A token with a digit is no part of a person's name: spaCy's small model labels "Kestrel v3.6.4"
    PERSON, and "Kestrel", the service, then folded into that one version as its "first name", so
    every Kestrel memory was explained as "Kestrel v3.6.4"."""
    toks = name_tokens(entity_id)
    if len(toks) < 2 or any(ch.isdigit() for ch in entity_id):
        return None
    return toks[0], toks[-1]


def build_entity(gid: str, name: str, kind: str | None, member_names: Sequence[str], df: int,
                 relations: Collection[tuple[str, bool]] = ()) -> Entity:
    """The public view of a group: aliases are the other members' names plus, for a multi-token
    entity labelled PERSON, its first and last name (so the query matcher finds "Sarah" even if no
    memory ever said "Sarah" alone); deduplicated by id, sorted.

    A first or last name counts only when written as one, capitalized. spaCy's small model tags
    runs of lower-case words as PERSON ("john plan", "hubert meeting"), and their last word then
    claimed every query that said "plan" or "meeting": on the bench's plain queries at 10k, 22 of
    100 ran the graph arm on such a match alone. A lower-case writer's "sarah jones" is still found
    by its full name, and by "sarah" once a memory says "sarah" alone (`plan_entities` folds it in)."""
    aliases = {normalize_entity_id(n): n for n in sorted(member_names)}
    toks = name.split()
    if len(toks) > 1 and kind and kind.upper() in _PERSON_KINDS and name_parts(gid) is not None:
        for t in (toks[0], toks[-1]):
            if t[:1].isupper():
                aliases.setdefault(normalize_entity_id(t), t)
    aliases.pop(gid, None)
    aliases.pop("", None)
    return Entity(gid, name, tuple(sorted(aliases.values())), kind, int(df), tuple(sorted(set(relations))))


class CatalogView(Protocol):
    """What `plan_entities` needs to know about a namespace's existing entities."""

    def lookup(self, ids: Collection[str]) -> dict[str, tuple[str, str | None]]:
        """Existing ids -> (canonical id of their group, kind of that canonical entity)."""
        ...

    def person_tokens(self, tokens: Collection[str]) -> dict[str, list[str]]:
        """token -> canonical multi-token person-like entities whose first or last token it is."""
        ...


@dataclass(frozen=True)
class NewEntity:
    id: str
    name: str
    kind: str | None
    canon: str


@dataclass(frozen=True)
class EntityPlan:
    """How a batch of names maps onto the graph: `resolved` id -> canonical id, entities to create,
    groups to fold into another (`merges`: old canonical -> new canonical)."""

    resolved: Mapping[str, str]
    created: tuple[NewEntity, ...]
    merges: tuple[tuple[str, str], ...]


def plan_entities(view: CatalogView, names: Sequence[tuple[str, str, str | None]]) -> EntityPlan:
    """Alias merging. Known ids resolve to their group. A new multi-token name starts a group. A new
    single-token person-like name that is the first or last token of exactly one known multi-token
    person-like entity joins it as an alias ("Sarah" -> "Sarah Chen"); with two candidates ("Sarah
    Chen", "Sarah Park") it stays its own entity and query-time resolution fans out. A standalone
    single-token entity seen *before* its full name is folded into the first full name that makes it
    unambiguous. Merges are sticky: a later "Sarah Park" does not split an existing merge."""
    info: dict[str, tuple[str, str | None]] = {}
    for eid, name, kind in names:
        if eid not in info:
            info[eid] = (name, kind)
    known = view.lookup(list(info))
    resolved = {eid: known[eid][0] for eid in info if eid in known}
    new = [eid for eid in info if eid not in known]
    multi = sorted(e for e in new if len(name_tokens(e)) > 1)
    single = sorted(e for e in new if len(name_tokens(e)) == 1)
    parts = {e: p for e in multi if person_like(info[e][1]) and (p := name_parts(e)) is not None}
    tokens = {t for p in parts.values() for t in p}
    tokens |= {e for e in single if person_like(info[e][1])}
    tokmap = {t: list(v) for t, v in view.person_tokens(tokens).items()}
    created: list[NewEntity] = []
    for e in multi:
        created.append(NewEntity(e, info[e][0], info[e][1], e))
        resolved[e] = e
        for t in set(parts.get(e, ())):
            tokmap.setdefault(t, []).append(e)
    for e in single:
        cands = sorted(set(tokmap.get(e, ()))) if person_like(info[e][1]) else []
        canon = cands[0] if len(cands) == 1 else e
        created.append(NewEntity(e, info[e][0], info[e][1], canon))
        resolved[e] = canon
    merges: list[tuple[str, str]] = []
    retro = sorted({t for p in parts.values() for t in p})
    for t, (canon, kind) in sorted(view.lookup([t for t in retro if t not in new]).items()):
        cands = sorted(set(tokmap.get(t, ())))
        if canon == t and person_like(kind) and len(cands) == 1:
            merges.append((t, cands[0]))
    folded = dict(merges)
    resolved = {eid: folded.get(c, c) for eid, c in resolved.items()}
    return EntityPlan(resolved, tuple(created), tuple(merges))

