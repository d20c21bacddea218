"""Time expressions in a query -> a closed `TimeWindow` (`parse_time`); see `parser.py`."""

from __future__ import annotations

from .parser import OPEN_START, RULE_NAMES, TIME_PATTERNS, TemporalMatch, parse_time

__all__ = ["TemporalMatch", "parse_time", "RULE_NAMES", "TIME_PATTERNS", "OPEN_START"]
