"""What the command line prints of text it did not write itself.

Memories, questions, categories and ids are data. A memory saved from a chat or a web page can hold
escape sequences that recolour, retitle or clear the terminal they are printed to (ESC [ 2 J), or
rewrite what was printed before them (a carriage return); a newline inside a category breaks the
table it labels. `terminal_safe` escapes such characters the way `repr` does, so they are shown,
not obeyed. The library's own values (`Retrieval.explain()`, reports, JSON) stay as they are: only
the CLI, at the moment of printing, decides what a terminal should see.
"""

from __future__ import annotations

__all__ = ["terminal_safe"]

_BLOCK_KEEP = frozenset("\n\t")


def _escape(ch: str) -> str:
    return ch.encode("unicode_escape").decode("ascii")


def terminal_safe(text: str, *, one_line: bool = False) -> str:
    """`text` with every non-printable character (C0 and C1 controls, DEL, line and paragraph
    separators, unassigned code points, lone surrogates) shown as its escape. Newlines and tabs are
    kept in a block of text and escaped with `one_line` (a table cell, a name)."""
    if text.isprintable():
        return text
    keep = frozenset() if one_line else _BLOCK_KEEP
    return "".join(ch if ch.isprintable() or ch in keep else _escape(ch) for ch in text)
