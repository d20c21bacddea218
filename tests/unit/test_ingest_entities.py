"""Entity mentions at write time, with the real spaCy pipeline: what a memory links to in the graph."""

from __future__ import annotations

import pytest

from fused_memory.ingest import EntityExtractor, _capitalizes_names, load_nlp
from fused_memory.types import Memory


@pytest.fixture(scope="module")
def extractor() -> EntityExtractor:
    return EntityExtractor()


@pytest.mark.slow
@pytest.mark.parametrize(("text", "must", "must_not"), [
    # LoCoMo turns on which spaCy's small model read the speaker label and the next word as one PERSON
    # (spaCy glued "Maria: Yep John" whole; the name after the label is lost, as it was before)
    ("Maria: Yep John, a bit of support can make an amazing change.", {"Maria"}, {"Maria: Yep John", "Yep John"}),
    ("Maria: Cool, John! It's inspiring to be around people like that.", {"Maria", "John"}, {"Maria: Cool"}),
    ("Maria: Yep, kindness is key and a little compassion can really turn someone's day around.",
     {"Maria"}, {"Maria: Yep"}),
    # a word that opens an utterance is never part of a name, nor a name of its own
    ("Nate: Woah Joanna, I won an international tournament yesterday!", {"Nate", "Joanna"}, {"Woah Joanna"}),
    ("Joanna: Pets sure do make life better! Glad Max is bringing you lots of joy.", {"Joanna", "Max"},
     {"Glad Max"}),
    ("Tim: Congrats, John! That is huge.", {"Tim"}, {"Congrats"}),
    # names without a label are left as spaCy found them
    ("Told Priya Natarajan about the Berlin office.", {"Priya Natarajan", "Berlin"}, set()),
    ("We flew to Great Britain last May.", {"Great Britain"}, {"Britain"}),
    # a possessive is not part of the name (spaCy keeps it at a sentence start)
    ("Aisha Weber's badge ID is E-94476.", {"Aisha Weber"}, {"Aisha Weber's"}),
    ("Peter Parker's suit was torn.", {"Peter Parker"}, {"Peter Parker's"}),
    # a writer who capitalizes names did not mean the lower-case words spaCy tagged as one
    ("Falcon is a hiring project owned by Ethan Rossi, re stevens meeting june ibm meeting meeting based.",
     {"Falcon", "Ethan Rossi"}, {"stevens meeting", "ibm"}),
    ("I prefer budget reports on Monday mornings, re meeting draft meeting anthony drew river shared women.",
     set(), {"anthony drew river shared women"}),
    # a writer who never capitalizes keeps every span: case says nothing there
    ("met sarah at acme in berlin yesterday", {"sarah", "berlin"}, set()),
])
def test_mentions_are_names_as_written(extractor: EntityExtractor, text: str, must: set[str],
                                        must_not: set[str]) -> None:
    names = {m.name for m in extractor.extract([Memory(text=text, namespace="ns")])[0]}
    assert must <= names, names
    assert not names & must_not and not any(":" in n for n in names), names


@pytest.mark.slow
@pytest.mark.parametrize(("text", "capitalizes"), [
    ("Met Nora Rossi in Osaka.", True),
    ("met nora in osaka. then went home", False),
    ("Met nora. Then went home. So tired!", False),     # sentence starts only
    ("so i said I would go", False),                     # "I" is always capital
    ("i love NYC and john", False),                      # an acronym is no capitalized name
    ("we met at the Hub", True),
    ("Caroline: hey! how are you", False),               # after a label colon: an utterance start
    ("", False),
])
def test_capitalizes_names(text: str, capitalizes: bool) -> None:
    assert _capitalizes_names(load_nlp().make_doc(text)) is capitalizes
