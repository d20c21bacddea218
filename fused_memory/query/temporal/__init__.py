"""Time expressions in a query -> a closed `TimeWindow` (`parse_time`), with `now` always injected.

The parser is a table of regex rules, each with a handler that turns its match into a span; why a table
of our own in front of dateparser, and how the rules rank and mask each other, is told in `parser.py`.
Its modules, each importing only those above it (and none this `__init__`):

    vocab       the words every rule shares: months, weekdays, years, number words, units
      |
    tense       how the query is told: in the past tense, or asking about plans
      |
    calendar    the query's context (`Ctx`), spans, `Ahead`, day / month / calendar-unit arithmetic
      |
      +---------------------+
      |                     |
    quarters              future       "next week", "in 3 days", "tomorrow": windows ahead
      |                     |
    points                  |          single points ("March 15th", "last Tuesday"), also range endpoints
      |                     |
      +---------------------+
      |
    parser      the range rules, the rule table's order, `parse_time`
      |
    statements  the times a memory's text states, read where it was said (`stated_times`)

Names shared between modules are public (no leading underscore); each module's `__all__` lists only
its own. Outside code imports from this package, which re-exports what it needs.
"""

from __future__ import annotations

from .parser import OPEN_START, RULE_NAMES, TIME_PATTERNS, VAGUE_RULES, TemporalMatch, parse_time
from .statements import stated_times

__all__ = ["TemporalMatch", "parse_time", "stated_times", "RULE_NAMES", "TIME_PATTERNS", "OPEN_START", "VAGUE_RULES"]
