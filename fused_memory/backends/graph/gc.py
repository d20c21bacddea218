"""Garbage collection of entity names no memory mentions any more, for both graph backends.

Why: deleting a user's memories about "Zelda Quist" must remove that name from graph storage, not
just hide it from queries. So whenever memories lose their mentions (`unlink`, a re-`link` that
replaces them, the embedded graph's `reconcile` and open), each entity group they touched is
collected when nothing keeps it:

* no memory mentions any member of the group (`df` 0),
* no member has an explicit relation (`relate()`: a user-asserted fact, kept with its ends),
* no member was named in an `add_alias()` call (both names are recorded as *asserted*: the
  embedded `asserted` table, the Cypher `asserted` property), and
* every other member is one the automatic alias rules could have made: a single token that is the
  first or last token of the canonical multi-token name of a person-like entity ("Zelda" in "Zelda
  Quist", `aliases`).

The last rule is for stores written before `add_alias` recorded its names: there an explicit alias
("ZQ" -> "Zelda Quist") is told from a derived one by its shape alone, since the automatic rules
never put anything else in a group. An explicit alias of that very shape written by the old code
("Zelda" -> "Zelda Quist") cannot be told from a derived one, so the embedded graph's sweep of a
store written before (on its first open with the `asserted` table) collects only single names; a
Cypher graph's one-off `collect_orphans` collects such a group (it says nothing the rules would not
derive again). Groups are collected whole (the canonical entity
with its derived aliases); a derived alias of a group that is kept stays with it.

An entity without mentions has no co-mention edges (their counts are derived from the memories
that mention both ends), and the Cypher `recent` lists live on the deleted nodes themselves, so
removing the nodes leaves nothing dangling; the entity version moves so caches drop the name.

This module holds the rule and the embedded graph's collection; the Cypher store's, which runs the
rule as a server-side statement, is in `cypher_gc` (so the embedded graph loads no Cypher).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING

from .aliases import name_parts, person_like

if TYPE_CHECKING:
    from .space import NamespaceGraph

__all__ = ["derived", "orphaned", "collect_space"]


def derived(member: str, canon: str, kind: str | None) -> bool:
    """Could the automatic alias rules have put entity `member` into the group of `canon` (of
    `kind`)? Only a person-like name gets first / last name aliases (`aliases.person_like`):
    "Globex" in the group of the ORG "Globex Corporation" was put there by `add_alias`. (The Cypher
    store evaluates the same rule on the server, in `queries.Q_GC`.)"""
    parts = name_parts(canon)
    return member == canon or (parts is not None and person_like(kind) and member in parts)


def orphaned(canon: str, kind: str | None, members: Collection[str], *, used: bool, asserted: bool,
             legacy: bool = False) -> bool:
    """The collection rule (module docstring): `used` when the group is mentioned or related.
    `legacy`: the store was written before `add_alias` recorded its names, so a group of several
    names may be the user's own ("Xena" for "Xena Ward" with no memory yet): only single names go."""
    if used or asserted or (legacy and len(members) > 1):
        return False
    return all(derived(m, canon, kind) for m in members)


def collect_space(sp: NamespaceGraph, entity_ids: Iterable[str], *, legacy: bool = False) -> list[str]:
    """Remove from `sp` every orphaned group among the groups of `entity_ids`; returns the removed
    entity ids (the caller deletes their rows). `legacy` as in `orphaned`."""
    removed: list[str] = []
    for g in sorted({sp.ent[e][2] for e in entity_ids if e in sp.ent}):
        members = sorted(sp.members.get(g, ()))
        # mentions first: a hub's adjacency (thousands of co-mentions) is only scanned once unmentioned
        used = sp.df(g) > 0 or any(e[0] == "r" for x in members for e in sp.adj.get(x, ()))
        if orphaned(g, sp.ent[g][1], members, used=used, asserted=not sp.asserted.isdisjoint(members),
                    legacy=legacy):
            for x in members:
                sp.remove_entity(x)
            removed += members
    return removed
