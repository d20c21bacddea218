"""What the command line prints of text it did not write itself.

Memories, questions, categories and ids are data. A memory saved from a chat or a web page can hold
escape sequences that recolour, retitle or clear the terminal they are printed to (ESC [ 2 J), or
rewrite what was printed before them (a carriage return, a backspace); bidirectional overrides
reorder what the reader sees; a newline inside a category breaks the table it labels; a lone
surrogate cannot be written to a UTF-8 terminal at all. `terminal_safe` shows exactly those
characters as their escapes (`\\x1b`, `\\u202e`) and leaves every other character alone: non-ASCII
spaces, the zero-width joiners inside emoji, Persian's ZWNJ and other format characters are text.
A backslash already in the data is printed as it is, so the text "\\x1b" and an escaped ESC look
alike; neither does anything to the terminal.

The library's own values (`Retrieval.explain()`, reports, JSON) stay as they are: only the CLI, at
the moment of printing, decides what a terminal should see.
"""

from __future__ import annotations

import re

__all__ = ["terminal_safe"]

#: C0 controls but tab and newline, DEL, C1 controls, line / paragraph separators, the bidi
#: embeddings, overrides and isolates, and lone surrogates.
_OBEYED = "\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_IN_BLOCK = re.compile(f"[{_OBEYED}]")
_IN_LINE = re.compile(f"[{_OBEYED}\t\n]")


def _escape(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


def terminal_safe(text: str, *, one_line: bool = False) -> str:
    """`text` with every character a terminal would obey instead of show replaced by its escape.
    Newlines and tabs are kept in a block of text and escaped with `one_line` (a table cell, a name)."""
    return (_IN_LINE if one_line else _IN_BLOCK).sub(_escape, text)
