"""How every `fused-memory` command shows its flags' defaults, shared by the commands' modules."""

from __future__ import annotations

import argparse

__all__ = ["DefaultsShown"]


class DefaultsShown(argparse.ArgumentDefaultsHelpFormatter):
    """Each flag's default in its help, once: not where the help already says it ("(default: now)"
    was followed by "(default: None)"), nor a None that means "not given"."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if action.default is None or "(default" in text:
            return text
        return super()._get_help_string(action)
