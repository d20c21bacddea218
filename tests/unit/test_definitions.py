"""Who someone is (`query.definitions`): the names a "who is X?" question asks about, and the
memories that say who X is rather than only mention X."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from fused_memory.query.definitions import asked_names, defines
from fused_memory.results import EntityCandidate, EntityRef, ParsedQuery

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


def parsed(text: str, name: str) -> ParsedQuery:
    return ParsedQuery(text=text, now=NOW, entity_refs=(EntityRef(name, (EntityCandidate(name.lower(), name),)),))


def test_who_questions_ask_about_their_names() -> None:
    assert asked_names(parsed("who's Lena again?", "Lena")) == ("Lena",)
    assert asked_names(parsed("tell me about Aylin", "Aylin")) == ("Aylin",)
    assert asked_names(parsed("what did Lena say?", "Lena")) == ()


@pytest.mark.parametrize(("text", "name"), [
    ("my little sister Lena (she moved to Leipzig a year before us) is pregnant!!", "Lena"),
    ("Aylin Demir is my manager as of today", "Aylin"),
    ("Karthik (my old manager from Kestrel) pinged on LinkedIn", "Karthik"),
    ("Sheila Barrett next door is a retired nurse from Limerick", "Sheila"),
    ("Declan rang from Boston. He's my eldest, a civil engineer over there", "Declan"),
    ("moved into a república in butantã. roomies: júlia (FAU too), ana", "júlia"),
])
def test_a_memory_that_says_who_someone_is(text: str, name: str) -> None:
    assert defines(text, (name,))


@pytest.mark.parametrize(("text", "name"), [
    ("coffee w Lena at Riquet, she's HUGE now haha", "Lena"),
    ("lunch with Aylin — she wants me to lead the Stadtwerke relaunch", "Aylin"),
    ("Drove the Yaris down to Kinsale with Bernie", "Bernie"),
])
def test_a_memory_that_only_mentions_them(text: str, name: str) -> None:
    assert not defines(text, (name,))
