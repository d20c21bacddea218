"""Knowledge updates as people write them: the hand-written set the versions of a fact are measured on.

`benchmarks/data/updates.jsonl` holds cases written the way users and chat agents state a change,
with no predicate given: the slot named differently in each version ("My manager is Priya" /
"Reporting to Tom now"), versions sharing no word ("Office: building C" / "We relocated to the
Riverside campus"), three versions of one fact, newer unrelated memories about the same person,
and per case one to three questions:

* ``current`` - the value now ("who is my manager currently?"): its newest version should come first;
* ``past`` - an earlier value or the change itself ("who was my manager before the reorg?",
  "when did I move to Munich?"): the version named by ``expected`` should come first;
* ``still`` - a fact that did not change, asked with "still" ("Do I still live in Porto?"): the
  fact should be in the top 3 and not be marked superseded (a false supersession).

The churn set (`evaluation.churn`) is generated and regular; this one is small, written by hand and
harder. The cases were split once, at random (seed 34, before any tuning), into a development half
and a test half (the ``split`` field of each case): tune on ``dev``, score ``test`` once.

Every case is ingested into a namespace of its own, beside the same background memories (about the
same user, on other subjects), at times `days_ago` before the set's `now`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from ..types import Memory
from .data import EvalDataset, EvalMemory, EvalQuery

__all__ = ["UpdateQuery", "UpdateCase", "UpdateSet", "load_updates", "UPDATE_KINDS", "score_update", "as_dataset"]

#: The kinds of question, as the set names them.
UPDATE_KINDS = ("current", "past", "still")


@dataclass(frozen=True)
class UpdateQuery:
    """A question of a case: `expected` is the id of the memory that should answer it."""

    text: str
    kind: str
    expected: str


@dataclass(frozen=True)
class UpdateCase:
    """One fact's versions (and the case's other memories), its questions and its half of the split."""

    id: str
    split: str
    memories: tuple[Memory, ...]
    queries: tuple[UpdateQuery, ...]

    @property
    def namespace(self) -> str:
        return f"upd-{self.id}"


@dataclass(frozen=True)
class UpdateSet:
    cases: tuple[UpdateCase, ...]
    background: tuple[tuple[str, float], ...]
    now: datetime

    def split(self, name: str) -> tuple[UpdateCase, ...]:
        """The cases of one half ("dev" or "test"; "all" for both)."""
        if name == "all":
            return self.cases
        return tuple(c for c in self.cases if c.split == name)

    def memories(self, cases: Iterable[UpdateCase]) -> list[Memory]:
        """Every memory of `cases`, each case's background first, in the case's namespace."""
        out: list[Memory] = []
        for c in cases:
            for j, (text, days) in enumerate(self.background):
                out.append(Memory(text=text, namespace=c.namespace, id=f"{c.id}-bg{j}",
                                  created_at=self.now - timedelta(days=days)))
            out.extend(c.memories)
        return out


def as_dataset(data: UpdateSet, split: str) -> EvalDataset:
    """One half of the set in the eval format (a namespace per case; category "update-<kind>"; a
    "still" question's answer is its fact), to train the learned order on (the dev half only)."""
    cases = data.split(split)
    memories = tuple(EvalMemory(m.id, m.namespace, m.text, created_at=m.created_at) for m in data.memories(cases))
    queries = tuple(EvalQuery(f"{c.id}-q{i}", c.namespace, q.text, f"update-{q.kind}", (q.expected,), data.now)
                    for c in cases for i, q in enumerate(c.queries))
    return EvalDataset(memories, queries)


def load_updates(path: str | Path) -> UpdateSet:
    """The set in `path` (a header line with `now` and `background`, then one case a line)."""
    lines = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    head, rows = lines[0], lines[1:]
    now = datetime.fromisoformat(head["now"])
    cases = []
    for row in rows:
        ns = f"upd-{row['id']}"
        mems = tuple(Memory(text=m["text"], namespace=ns, id=f"{row['id']}-{i}",
                            created_at=now - timedelta(days=m["days_ago"])) for i, m in enumerate(row["memories"]))
        queries = tuple(UpdateQuery(q["text"], q["kind"], f"{row['id']}-{q['expected']}") for q in row["queries"])
        cases.append(UpdateCase(row["id"], row["split"], mems, queries))
    background = tuple((b["text"], float(b["days_ago"])) for b in head["background"])
    return UpdateSet(tuple(cases), background, now)


def score_update(query: UpdateQuery, ids: Sequence[str], superseded: Sequence[str]) -> bool:
    """Whether a ranking (`ids`, best first; `superseded`: the ids marked superseded in it) answers
    the question: its expected memory first ("current", "past"), or in the top 3 and not marked
    superseded ("still")."""
    if query.kind == "still":
        return query.expected in ids[:3] and query.expected not in superseded
    return bool(ids) and ids[0] == query.expected
