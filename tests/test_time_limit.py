"""Every test runs under a time limit that CI enforces (pytest-timeout, `timeout` in pyproject's
pytest config, which `.ci/run` reads): a wedged server fails the test that waits on it instead of
hanging CI until the job's own limit. The limit is well above the slowest test (about 140 s, the
crash-durability test, on a loaded 2-core host)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_every_test_has_a_time_limit_that_ci_enforces(pytestconfig: pytest.Config) -> None:
    assert pytestconfig.pluginmanager.hasplugin("timeout")
    assert float(pytestconfig.getini("timeout")) == 600
    test_extra = (ROOT / "pyproject.toml").read_text(encoding="utf-8").split("\ntest = [", 1)[1].split("]", 1)[0]
    assert '"pytest-timeout>=' in test_extra  # installed with the test extra, as CI installs it


@pytest.mark.slow  # runs pytest in a fresh interpreter, wedged for the time limit
def test_a_wedged_test_fails_instead_of_hanging(tmp_path: Path) -> None:
    (tmp_path / "test_wedged.py").write_text("import time\n\ndef test_wedged():\n    time.sleep(120)\n")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--timeout=2",
                           "--rootdir", str(tmp_path), str(tmp_path)], capture_output=True, text=True, timeout=100)
    assert proc.returncode == 1 and "Timeout" in proc.stdout, proc.stdout + proc.stderr
