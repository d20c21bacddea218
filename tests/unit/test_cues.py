"""Time cues, table-driven: which questions ask for a time, and which memory texts state one.

`asks_time` must be narrow (only a question whose answer is a time sends the temporal arm to the
memories that state one); `mentions_time` reads memory text with the query parser's own rules, so
"next month" and "yesterday" count even though no window can be computed for them.
"""

from __future__ import annotations

import pytest

from fused_memory.backends.codec import from_payload, to_payload
from fused_memory.query import asks_time, has_time_cue, mentions_time, parse_query
from fused_memory.query.cues import ANSWER_TIME, answer_types
from fused_memory.store.ingest import answer_tags
from fused_memory.types import Memory

ASKS = [
    ("When did Caroline go to the LGBTQ support group?", True),
    ("when is the Kestrel launch", True),
    ("  WHEN did we ship it?", True),
    ("In what year did Melanie start painting?", True),
    ("Which month did Jon open his studio?", True),
    ("what date is the offsite", True),
    ("How long ago was Caroline's 18th birthday?", True),
    ("How long has Caroline had her current group of friends for?", True),  # a duration is a time
    ("How long is the drive to Berlin?", True),
    ("How many weeks passed between the two adoptions?", True),
    ("Since when has Nate had his turtles?", True),
    ("I moved in June. When did you?", True),
    # "when" as a conjunction, or time as a topic rather than the answer
    ("What did Melanie say when I asked about painting?", False),
    ("What is my current address?", False),
    ("what's the latest on JIRA-9921?", False),
    ("How many books has Nate read?", False),
    ("what happened yesterday?", False),
    ("", False),
]

MENTIONS = [
    ("Caroline: I went to a LGBTQ support group yesterday and it was so powerful.", True),
    ("We're putting together a talent show for the kids next month.", True),
    ("The official opening night is tomorrow.", True),
    ("I painted that lake sunrise last year!", True),
    ("It happened on 7 May 2023.", True),
    ("I've known these friends for 4 years, since I moved from my home country.", True),
    ("Seven years now, and I've finally found my real muses.", True),
    ("Playing video games and watching movies are my main hobbies.", False),
    ("Thanks, Melanie! That's really sweet.", False),
    ("", False),
]


@pytest.mark.parametrize("question, expected", ASKS, ids=[q or "<empty>" for q, _ in ASKS])
def test_asks_time(question: str, expected: bool) -> None:
    assert asks_time(question) is expected


@pytest.mark.parametrize("text, expected", MENTIONS, ids=[t[:40] or "<empty>" for t, _ in MENTIONS])
def test_mentions_time(text: str, expected: bool) -> None:
    assert mentions_time(text) is expected
    assert answer_types(text) == ((ANSWER_TIME,) if expected else ())


def test_a_question_that_asks_for_a_time_also_has_a_time_cue() -> None:
    """Otherwise the optimizer's "no time cue" rule would skip the arm the question needs."""
    from datetime import datetime, timezone
    now = datetime(2024, 5, 15, tzinfo=timezone.utc)
    for question, asks in ASKS:
        if asks:
            parsed = parse_query(question, now=now)
            assert parsed.answer_type == ANSWER_TIME and parsed.time_cue, question
    assert parse_query("what is my current address?", now=now).answer_type is None


def test_non_strings_are_no_cue() -> None:
    for fn in (asks_time, mentions_time, has_time_cue):
        assert fn(None) is False  # type: ignore[arg-type]


def test_payload_carries_answer_types_and_reads_back_unchanged() -> None:
    m = Memory(text="Caroline: I went to the support group yesterday.", namespace="n", id="m1")
    p = to_payload(m, answers=answer_tags(m.text))
    assert p["answers"] == [ANSWER_TIME]
    assert answer_tags("I like tea") == []
    assert from_payload(p) == m
