"""`FailureLog`: a failing arm is a WARNING when it starts failing, then at most once per interval
(DEBUG in between), and warns again at once after it has answered. Clock injected."""

from __future__ import annotations

import logging

import pytest

from fused_memory.ensemble.hung_arms import FailureLog
from fused_memory.results import ArmFailure

DOWN = ArmFailure("graph", "BackendUnavailable: bolt down", "error")
SLOW = ArmFailure("lexical", "no answer within 2.00s", "timeout")
UNREAD = ArmFailure("dense", "BackendUnavailable: qdrant down", "hydration")  # dense answered; reads failed

# (time, failures, arms that answered, (level, arm) logged: what an operator sees at each query)
STEPS = [
    (0.0, [DOWN], ["dense"], [("WARNING", "graph")]),                    # graph starts failing
    (1.0, [DOWN], ["dense"], [("DEBUG", "graph")]),                      # still down: no new warning
    (30.0, [DOWN, SLOW], ["dense"], [("WARNING", "lexical"), ("DEBUG", "graph")]),  # lexical starts
    (61.0, [DOWN], ["dense", "lexical"], [("WARNING", "graph")]),        # a minute on: warned again
    (62.0, [], ["dense", "graph", "lexical"], []),                       # every arm answers: silence
    (63.0, [DOWN], ["dense"], [("WARNING", "graph")]),                   # fails again after answering
    (64.0, [UNREAD], ["dense", "graph"], [("WARNING", "dense")]),         # hydration: dense answered
    (65.0, [UNREAD], ["dense", "graph"], [("DEBUG", "dense")]),           # ... still quiet while it lasts
]


def test_failure_log_warns_on_change_and_once_a_minute(caplog: pytest.LogCaptureFixture) -> None:
    clock = [0.0]
    log = FailureLog(logging.getLogger("test.failure_log"), every_s=60.0, clock=lambda: clock[0])
    with caplog.at_level(logging.DEBUG, logger="test.failure_log"):
        for at, failures, answered, levels in STEPS:
            caplog.clear()
            clock[0] = at
            log.report(failures, answered)
            logged = [(r.levelname, r.getMessage()) for r in caplog.records]
            assert [level for level, _ in logged] == [level for level, _ in levels], at
            for (_, message), (_, arm) in zip(logged, levels, strict=True):
                assert message.startswith(f"arm failures: {arm} (")
