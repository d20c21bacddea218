"""The base of the package's closed sets (arms, orders, shortcut kinds, failure kinds...).

A closed set is an enum whose members are their strings: `Arm.DENSE == "dense"`, a member hashes as
its string (a dict keyed by "dense" finds `Arm.DENSE`), and `str()` / f-strings / JSON give the bare
value. So callers keep passing and comparing plain strings, while the code names each choice once.
`enum.StrEnum` does this from Python 3.11; the package supports 3.10 (pyproject), so it is here.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, TypeVar

__all__ = ["StrEnum", "member"]

E = TypeVar("E", bound="StrEnum")


class StrEnum(str, Enum):
    """A `str` enum that prints as its value ("dense", not "Arm.DENSE")."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


def member(kind: type[E], value: Any, what: str, error: type[Exception]) -> E:
    """`value` (a member or its string) as a member of `kind`, or `error` naming `what` and the choices."""
    try:
        return kind(value)
    except ValueError:
        choices = ", ".join(repr(m.value) for m in kind)
        raise error(f"{what} must be one of {choices}, got {value!r}") from None
