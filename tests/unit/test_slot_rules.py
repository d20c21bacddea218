"""Slots read from a memory's text (`query.slots`): every named rule keys the examples it carries;
changes written as events state their old and new values; questions, bystanders and states state no
slot. Read off the real spaCy parse ingest runs, as the store reads them."""

from __future__ import annotations

import pytest

from fused_memory.query.entities import load_nlp
from fused_memory.query.slots import SLOT_RULES, slot_facts_of, slot_key

EXAMPLES = [(rule.name, text, key or None) for rule in SLOT_RULES for text, key in rule.examples]


@pytest.fixture(scope="module")
def nlp():  # noqa: ANN201 - spaCy's pipeline
    return load_nlp()


@pytest.mark.slow
@pytest.mark.parametrize(("rule", "text", "key"), EXAMPLES, ids=[f"{r}: {t[:40]}" for r, t, _ in EXAMPLES])
def test_every_rule_keys_its_own_examples(nlp, rule: str, text: str, key: str | None) -> None:
    facts = slot_facts_of(nlp(text))
    assert slot_key(nlp(text)) == key, facts
    assert rule in {f.rule for f in facts}, facts  # this rule read it, not another one
    if key is None:
        assert facts and not facts[0].attribute and facts[0].old  # a change with no attribute: its old value


@pytest.mark.slow
@pytest.mark.parametrize(("text", "key", "new", "old"), [
    ("We moved from York to Bristol.", "user home", ("bristol",), ("york",)),
    ("I left Initech and joined Hooli.", "user employer", ("hooli",), ("initech",)),
    ("Sold the Golf and bought a Zoe.", "user car", ("zoe",), ("golf",)),
    ("The Octavia is gone!! traded it in at the Cupra dealer, we're leasing a Cupra Born now.", "user car",
     ("cupra born",), ("octavia",)),
    ("switched banks from N26 to DKB", "user bank", ("dkb",), ("n26",)),
    ("quit café pacheco. starting internship at estúdio terra", "user employer", ("estúdio terra",),
     ("café pacheco",)),
])
def test_a_change_written_as_an_event_states_the_value_before_and_after(nlp, text, key, new, old) -> None:
    (fact,) = [f for f in slot_facts_of(nlp(text)) if f.key == key]
    assert (fact.new, fact.old) == (new, old)


@pytest.mark.slow
@pytest.mark.parametrize("text", [
    "Where should we eat on Friday?",          # a question is never a version of a statement
    "User: should I take the charge nurse position?",
    "Had lunch with Dana",                     # two facts about one name are not versions
    "My sister Dana got married in Porto",
    "Ben has a fever, 38.9. staying home with him, cancelled my 10am",
    "my voice is gone",                        # a state, not a value
    "Drove the Golf to Cornwall for the weekend.",  # a trip with the car, not which car
    "Therapy session moved to 5pm on Thursday.",
    "Jonas and I went hiking in the Alps.",
])
def test_no_slot_where_no_rule_is_sure(nlp, text: str) -> None:
    assert slot_key(nlp(text)) is None, slot_facts_of(nlp(text))


@pytest.mark.slow
def test_a_speaker_label_makes_the_speaker_the_first_person(nlp) -> None:
    assert slot_key(nlp("Caroline: I moved to Denver last year.")) == "caroline home"
    assert slot_key(nlp("User: I live in HSR Layout, Bangalore.")) == "user home"
