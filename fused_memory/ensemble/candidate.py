"""What the stage after fusion passes from step to step: a `Candidate` (a fused memory, its score and
what the stage did to it), and the two readings of a memory every step shares: when it was true
(`memory_time`) and its wording as duplicates compare it (`Candidate.wording`, `text_key`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..backends.wording import Wording, of_text, text_key
from ..results import Contribution
from ..types import Memory

__all__ = ["Candidate", "Groups", "memory_time", "text_key"]


@dataclass(frozen=True)
class Candidate:
    """A fused candidate: the memory, its score and each list's share of it, and what the stage
    after fusion did to it (see `FusedHit` for the fields' meaning)."""

    memory: Memory
    score: float
    contributions: tuple[Contribution, ...]
    collapsed: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()
    superseded_by: str | None = None
    rerank_score: float | None = None
    rank_before_rerank: int | None = None
    version_slot: str | None = None
    older_by_days: tuple[float, ...] = ()
    learned: Any = None  # what the learned order said of it (`ranking.Learned`), None under RRF's order

    def wording(self) -> Wording:
        """What versions and collapse compare of its text: as its payload keeps it (read at write
        time, `backends.wording`), else read from the text."""
        return of_text(self.memory.text)


def memory_time(m: Memory) -> datetime | None:
    """When a memory was true: when it happened (`event_at`), else when it was stated (`created_at`)."""
    return m.event_at or m.created_at


class Groups:
    """Union-find over candidate indices: the groups that pairwise `join`s make (near-duplicates,
    versions of a fact), each rooted at its smallest index, so at its best-ranked member."""

    def __init__(self, indices: Iterable[int]) -> None:
        self._parent = {i: i for i in indices}

    def root(self, i: int) -> int:
        parent = self._parent
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(self, i: int, j: int) -> None:
        a, b = self.root(i), self.root(j)
        if a != b:
            self._parent[max(a, b)] = min(a, b)
