"""The slot a question asks (`query.asked_slot`): each named rule reads its examples; the
attribute meets the memories' slots on one name ("boss" asks what "my manager is" states)."""

from __future__ import annotations

import pytest

from fused_memory.query.asked_slot import ASKED_RULES, asked_slot

EXAMPLES = [(rule.name, text, key) for rule in ASKED_RULES for text, key in rule.examples]


@pytest.mark.parametrize(("rule", "text", "key"), EXAMPLES, ids=[t for _, t, _ in EXAMPLES])
def test_every_rule_reads_its_own_examples(rule: str, text: str, key: str) -> None:
    asked = asked_slot(text)
    assert asked is not None and key in asked.keys and asked.rule == rule


@pytest.mark.parametrize(("text", "keys"), [
    ("what do I do for work?", {"user role", "user employer"}),
    ("What sort of phone do I have now?", {"user phone"}),
    ("What dose of Eltroxin did I start on?", {"user eltroxin"}),
    ("where did Dana work before Klarna?", {"dana employer", "dana role"}),
])
def test_the_attribute_goes_through_the_slots_names(text: str, keys: set[str]) -> None:
    asked = asked_slot(text)
    assert asked is not None and asked.keys == keys


@pytest.mark.parametrize("text", ["what did I do yesterday?", "who is Dana?", "what happened in March?",
                                  "which dentist does the family go to now?", "tell me about the Berlin office"])
def test_a_question_that_names_no_slot(text: str) -> None:
    assert asked_slot(text) is None
