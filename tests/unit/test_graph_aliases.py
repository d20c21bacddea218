"""An entity's public view: which aliases the query matcher may find it by."""

from __future__ import annotations

import pytest

from fused_memory.backends.graph.aliases import build_entity, name_parts


@pytest.mark.parametrize(("name", "kind", "members", "aliases"), [
    # a person's first and last name are aliases, so "Sarah" finds "Sarah Chen"
    ("Sarah Chen", "PERSON", [], ("Chen", "Sarah")),
    # other members of the group are aliases whatever their kind
    ("Sarah Chen", "PERSON", ["S. Chen", "Sarah"], ("Chen", "S. Chen", "Sarah")),
    # only people get name parts: "Berlin Office" is not found by "Office"
    ("Berlin Office", "ORG", [], ()),
    ("Sarah", "PERSON", [], ()),
    # a part written in lower case is no name: "john plan" must not claim every query saying "plan"
    ("john plan", "PERSON", [], ()),
    ("Michael meeting draft", "PERSON", [], ("Michael",)),
    # ... though a member the writer named stays an alias
    ("sarah jones", "PERSON", ["sarah"], ("sarah",)),
    # a token with a digit is no part of a person's name ("Kestrel v3.6.4" is labelled PERSON by spaCy)
    ("Kestrel v3.6.4", "PERSON", [], ()),
    # an unknown kind gets no name parts either (person_like is for merging, not for aliases)
    ("Sarah Chen", None, [], ()),
])
def test_aliases(name: str, kind: str | None, members: list[str], aliases: tuple[str, ...]) -> None:
    e = build_entity(name.lower(), name, kind, members, 3)
    assert e.aliases == aliases and e.mentions == 3 and e.name == name


@pytest.mark.parametrize(("entity_id", "parts"), [
    ("sarah chen", ("sarah", "chen")),
    ("mary ann de la cruz", ("mary", "cruz")),
    ("sarah", None),
    ("kestrel v3.6.4", None),
    ("agent 007", None),
])
def test_name_parts(entity_id: str, parts: tuple[str, str] | None) -> None:
    assert name_parts(entity_id) == parts
