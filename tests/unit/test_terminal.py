"""What the CLI prints of data: control characters are shown as escapes, never sent to the terminal
(a memory holding ESC [ 2 J would clear the screen of whoever lists it)."""

from __future__ import annotations

import pytest

from fused_memory.evaluation.report import format_table
from fused_memory.terminal import terminal_safe

# (text, one_line, printed)
CASES = [
    ("plain text, émoji 🎉 and 中文", False, "plain text, émoji 🎉 and 中文"),
    ("two\nlines\tand a tab", False, "two\nlines\tand a tab"),
    ("two\nlines\tand a tab", True, "two\\nlines\\tand a tab"),
    ("\x1b[2Jcleared", False, "\\x1b[2Jcleared"),
    ("title\x1b]0;pwned\x07", False, "title\\x1b]0;pwned\\x07"),
    ("over\rwrite", False, "over\\rwrite"),
    ("del\x7f and c1\x9b", False, "del\\x7f and c1\\x9b"),
    ("line\u2028sep", False, "line\\u2028sep"),
    ("lone \ud800 surrogate", False, "lone \\ud800 surrogate"),
    ("back\bspace", False, "back\\x08space"),
    ("right-to-left \u202eoverride\u2066 isolate", False, "right-to-left \\u202eoverride\\u2066 isolate"),
    ("", True, ""),
    # text, not commands: non-ASCII spaces, joiners inside emoji and words, soft hyphen, tag flags,
    # private use, combining marks, right-to-left letters
    ("a\u00a0b\u202fc\u3000d", True, "a\u00a0b\u202fc\u3000d"),
    ("family 👨\u200d👩\u200d👧 and می\u200cخواهم", True, "family 👨\u200d👩\u200d👧 and می\u200cخواهم"),
    ("soft\u00adhyphen, flag 🏴\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f, \ue000",
     True, "soft\u00adhyphen, flag 🏴\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f, \ue000"),
    ("e\u0301 שלום مرحبا", True, "e\u0301 שלום مرحبا"),
]


@pytest.mark.parametrize(("text", "one_line", "printed"), CASES)
def test_terminal_safe(text: str, one_line: bool, printed: str) -> None:
    assert terminal_safe(text, one_line=one_line) == printed


def test_a_table_cell_stays_on_its_line_and_sends_no_escape() -> None:
    table = format_table(["system", "temporal\x1b[31m (3)"], [["fused\nx", 0.5]])
    assert "\x1b" not in table and len(table.splitlines()) == 3
    assert "temporal\\x1b[31m (3)" in table and "fused\\nx" in table
