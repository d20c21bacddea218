"""The personal-timeline set: one person's life told to an assistant, and everyday questions about it.

`benchmarks/data/timeline.jsonl` holds personas, one a line: 25-40 memories each over one to five
years, written as people write them (first person, chat turns, notes), saved as an assistant saves
them: the time each was said (`created_at`), rarely an event time, never a predicate. Each persona is
asked at least 20 questions at one moment (`now`), each of one kind:

* ``current`` - the value now of a fact that changed ("where do I live?");
* ``past`` - an earlier value ("where did I work before Hooli?");
* ``window`` - what happened or was said in a time window ("what did I do yesterday?");
* ``plan`` - a dated plan ("what am I doing on June 14?");
* ``fact`` - a stable fact or identifier ("what's my passport number?");
* ``who`` - who a named person is ("who is Dana?").

A question lists every memory that is a right first answer (`answers`). The personas were written
by authors who had not read the code, split at random by persona (`split`, seed 43) into a
development half and a test half before any tuning: tune on ``dev``, score ``test`` once.

What a run measures (`score_question`): whether the first hit is right; whether a right answer is
marked superseded on a question that is not about the past (a false supersession); whether the
question was answered with nothing; and whether the first `j` hits at `k=j` are the first `j` at
`k=10` (the first answer never depends on `k`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ..enums import StrEnum
from ..types import Memory
from .data import EvalDataError, EvalDataset, EvalMemory, EvalQuery, parse_time, read_jsonl

__all__ = ["QuestionKind", "TIMELINE_KINDS", "TimelineQuestion", "Persona", "TimelineSet", "load_timeline",
           "QuestionOutcome", "score_question", "TimelineReport", "run_timeline", "as_dataset"]

class QuestionKind(StrEnum):
    """What a timeline question asks: the current value, a past one, a window, a plan, a fact, who."""

    CURRENT = "current"
    PAST = "past"
    WINDOW = "window"
    PLAN = "plan"
    FACT = "fact"
    WHO = "who"


#: The kinds of question, in the order reports list them.
TIMELINE_KINDS: tuple[str, ...] = tuple(k.value for k in QuestionKind)


@dataclass(frozen=True)
class TimelineQuestion:
    """A question asked at its persona's `now`; `answers` are the ids of every right first answer."""

    id: str
    text: str
    kind: str
    answers: frozenset[str]


@dataclass(frozen=True)
class Persona:
    """One person's memories and questions, and the half of the split it belongs to."""

    id: str
    split: str
    now: datetime
    about: str
    memories: tuple[Memory, ...]
    questions: tuple[TimelineQuestion, ...]

    @property
    def namespace(self) -> str:
        return f"timeline-{self.id}"


@dataclass(frozen=True)
class TimelineSet:
    personas: tuple[Persona, ...]

    def split(self, name: str) -> tuple[Persona, ...]:
        """The personas of one half ("dev" or "test"; "all" for both)."""
        if name not in ("dev", "test", "all"):
            raise EvalDataError(f"split must be dev, test or all, got {name!r}")
        return self.personas if name == "all" else tuple(p for p in self.personas if p.split == name)

    @staticmethod
    def memories(personas: Iterable[Persona]) -> list[Memory]:
        return [m for p in personas for m in p.memories]


def _persona(row: dict[str, Any], where: str) -> Persona:
    pid = row.get("persona")
    if not isinstance(pid, str) or not pid:
        raise EvalDataError(f"{where}: a persona needs an id ('persona')")
    split = row.get("split")
    if split not in ("dev", "test"):
        raise EvalDataError(f"{where}: persona {pid} has split {split!r}; expected 'dev' or 'test'")
    now = parse_time(row.get("now"), f"{where}: now")
    if now is None:
        raise EvalDataError(f"{where}: persona {pid} has no 'now'")
    ns = f"timeline-{pid}"
    memories = []
    for m in row.get("memories") or ():
        said = parse_time(m.get("said"), f"{where}: {m.get('id')}: said")
        memories.append(Memory(text=m["text"], namespace=ns, id=m["id"], created_at=said,
                               event_at=parse_time(m.get("event_at"), f"{where}: {m.get('id')}: event_at")))
    known = {m.id for m in memories}
    questions = []
    for q in row.get("questions") or ():
        answers = frozenset(q.get("answers") or ())
        if q.get("kind") not in TIMELINE_KINDS:
            raise EvalDataError(f"{where}: question {q.get('id')} has kind {q.get('kind')!r}; "
                                f"expected one of {', '.join(TIMELINE_KINDS)}")
        if not answers or not answers <= known:
            raise EvalDataError(f"{where}: question {q.get('id')} answers {sorted(answers - known) or 'nothing'}, "
                                "which are not memories of its persona")
        questions.append(TimelineQuestion(q["id"], q["q"], q["kind"], answers))
    return Persona(pid, split, now, str(row.get("about") or ""), tuple(memories), tuple(questions))


def load_timeline(path: str | Path) -> TimelineSet:
    """The set in `path`: one persona a line (see the module docstring)."""
    path = Path(path)
    return TimelineSet(tuple(_persona(row, f"{path}:{n}") for n, row in read_jsonl(path)))


@dataclass(frozen=True)
class QuestionOutcome:
    """What one question's rankings showed."""

    question: TimelineQuestion
    first: str | None
    right: bool
    empty: bool
    false_supersession: bool
    stable: bool

    def to_json(self) -> dict[str, Any]:
        return {"id": self.question.id, "kind": self.question.kind, "q": self.question.text, "first": self.first,
                "right": self.right, "empty": self.empty, "false_supersession": self.false_supersession,
                "stable": self.stable}


def score_question(question: TimelineQuestion, ids: Sequence[str], superseded: Iterable[str],
                   by_k: Sequence[Sequence[str]] = ()) -> QuestionOutcome:
    """Score one question from its ranking at k=10 (`ids`, best first), the ids marked superseded in
    it, and the rankings at k=1, 2, ... (`by_k`: the first j at k=j must be the first j at k=10)."""
    first = ids[0] if ids else None
    wrongly_stale = question.kind != QuestionKind.PAST and bool(question.answers & set(superseded))
    stable = all(list(r) == list(ids[:j]) for j, r in enumerate(by_k, start=1))
    return QuestionOutcome(question, first, first in question.answers, not ids, wrongly_stale, stable)


def as_dataset(data: TimelineSet, split: str) -> EvalDataset:
    """One half of the set in the eval format (a namespace per persona; category "timeline-<kind>"),
    for what reads that format: capturing candidates to train the learned order on (the dev half
    only: the test half is scored, never learned from)."""
    personas = data.split(split)
    memories = tuple(EvalMemory(m.id, p.namespace, m.text, event_at=m.event_at, created_at=m.created_at)
                     for p in personas for m in p.memories)
    queries = tuple(EvalQuery(q.id, p.namespace, q.text, f"timeline-{q.kind}", tuple(sorted(q.answers)), p.now)
                    for p in personas for q in p.questions)
    return EvalDataset(memories, queries)


@dataclass(frozen=True)
class TimelineReport:
    """Every question's outcome, and the shares per kind."""

    split: str
    outcomes: tuple[QuestionOutcome, ...]

    def shares(self) -> dict[str, dict[str, Any]]:
        """Per kind and overall: first hit right, false supersessions, empty answers, k-stable."""
        out: dict[str, dict[str, Any]] = {}
        for kind in (*TIMELINE_KINDS, "all"):
            rows = [o for o in self.outcomes if kind in ("all", o.question.kind)]
            if not rows:
                continue
            out[kind] = {"n": len(rows), "right": round(sum(o.right for o in rows) / len(rows), 4),
                         "false_supersessions": sum(o.false_supersession for o in rows),
                         "empty": sum(o.empty for o in rows),
                         "k_stable": round(sum(o.stable for o in rows) / len(rows), 4)}
        return out

    def table(self) -> str:
        lines = [f"{'kind':<8} {'n':>4} {'first right':>12} {'false stale':>12} {'empty':>6} {'k-stable':>9}"]
        for kind, row in self.shares().items():
            lines.append(f"{kind:<8} {row['n']:>4} {row['right']:>12.3f} {row['false_supersessions']:>12} "
                         f"{row['empty']:>6} {row['k_stable']:>9.3f}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {"split": self.split, "shares": self.shares(), "questions": [o.to_json() for o in self.outcomes]}


def run_timeline(data: TimelineSet, split: str = "dev", *, config: Any = None, stability: bool = True,
                 store_path: str | Path | None = None, show: Any = None) -> TimelineReport:
    """Ingest `split`'s personas into one embedded store (a namespace each; a temporary directory
    unless `store_path`), ask every question at its persona's `now` at k=10 (and at k=1..10 when
    `stability`), and score them. `show(question, outcome, retrieval)` is called for each question."""
    import tempfile

    from ..ensemble import EnsembleMemory
    from ..store.memory_store import MemoryStore

    personas = data.split(split)
    outcomes: list[QuestionOutcome] = []
    with tempfile.TemporaryDirectory(prefix="fused-memory-timeline-") as tmp, \
            MemoryStore.embedded(store_path or tmp) as store:
        store.add(data.memories(personas), show_progress=False)
        ens = EnsembleMemory(store, config)
        try:
            for p in personas:
                for q in p.questions:
                    r = ens.retrieve(q.text, namespace=p.namespace, k=10, now=p.now)
                    ids = [h.memory.id for h in r.hits]
                    by_k = [[h.memory.id for h in ens.retrieve(q.text, namespace=p.namespace, k=j, now=p.now).hits]
                            for j in range(1, 11)] if stability else []
                    outcome = score_question(q, ids, [h.memory.id for h in r.hits if h.superseded_by], by_k)
                    outcomes.append(outcome)
                    if show is not None:
                        show(q, outcome, r)
        finally:
            ens.close()
    return TimelineReport(split, tuple(outcomes))
