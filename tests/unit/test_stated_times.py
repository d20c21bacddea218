"""The times a memory's text states, read where it was said (`query.temporal.stated_times`), and
the question's yearless dates read by its tense."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest

from fused_memory.query.temporal import parse_time, stated_times

TZ = timezone(timedelta(hours=2))
SAID = datetime(2026, 6, 3, 10, 0, tzinfo=TZ)  # a Wednesday
ASKED = datetime(2026, 6, 10, 18, 0, tzinfo=TZ)


def days(text: str, said: datetime = SAID) -> list[tuple[date, date]]:
    return [(w.start.date(), w.end.date()) for w in stated_times(text, said)]


@pytest.mark.parametrize(("text", "expected"), [
    ("Booked the vet for the 14th.", [(date(2026, 6, 14), date(2026, 6, 14))]),
    ("We met on March 3", [(date(2026, 3, 3), date(2026, 3, 3))]),           # told in the past: the last one
    ("Dentist on March 3 at 10", [(date(2027, 3, 3), date(2027, 3, 3))]),    # a plan: the coming one
    ("I went to the support group yesterday", [(date(2026, 6, 2), date(2026, 6, 2))]),  # the day itself
    ("We moved to York last summer", [(date(2025, 6, 1), date(2025, 8, 31))]),
    ("booked the service centre Sat 17 Jan 9am", [(date(2026, 1, 17), date(2026, 1, 17))]),  # the weekday says the year
    ("next week we fly to Rome; back on the 21st", [(date(2026, 6, 8), date(2026, 6, 14)),
                                                   (date(2026, 6, 21), date(2026, 6, 21))]),
])
def test_the_times_a_text_states(text: str, expected: list[tuple[date, date]]) -> None:
    assert days(text) == expected


@pytest.mark.parametrize("text", [
    "Walked the dog by the lake",                 # no time at all
    "the 31st of February is my fake birthday",   # an impossible date reads nothing
    "on the 14th floor", "my 3rd birthday",       # ordinals that are no days
    "passport valid till 2035", "good through 2027",  # a deadline, not what the memory is about
    "I've been feeling better recently",           # too vague to say when
])
def test_no_time_where_the_text_states_none(text: str) -> None:
    assert stated_times(text, SAID) == ()


def test_reading_never_fails_a_write() -> None:
    assert stated_times("x" * 100_000, SAID) == () and stated_times("", SAID) == ()
    assert stated_times("yesterday", datetime(2026, 6, 3)) == ()  # a naive time: nothing is read


@pytest.mark.parametrize(("question", "day"), [
    ("what am I doing on June 14?", date(2026, 6, 14)),
    ("anything planned for the 14th of June?", date(2026, 6, 14)),   # present tense: the coming one
    ("what's happening on June 23?", date(2026, 6, 23)),
    ("what did I do on June 2?", date(2026, 6, 2)),                    # past tense: the last one
    ("what did I do on June 14?", date(2025, 6, 14)),                  # past tense, not yet come: last year's
    ("what's on the 14th?", date(2026, 6, 14)),
    ("what have I got on Saturday", date(2026, 6, 13)),                # "have got": the present
])
def test_a_yearless_date_in_a_question_is_read_by_its_tense(question: str, day: date) -> None:
    m = parse_time(question, ASKED)
    assert m is not None and m.window.start.date() == day == m.window.end.date()


def test_parts_of_today_and_yesterday_are_what_they_say() -> None:
    morning = parse_time("anything I told you this morning?", ASKED)
    assert morning is not None and (morning.window.start.hour, morning.window.end.hour) == (0, 11)
    yesterday = parse_time("what did I tell you yesterday?", ASKED)
    assert yesterday is not None and yesterday.window.end < ASKED.replace(hour=0)  # not up to now
    assert parse_time("what did I get up to last weekend?", ASKED).phrase == "last weekend"  # not "until"
