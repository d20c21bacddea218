"""Captured candidates: every query's per-arm ranked lists, plan cues and payloads, asked once.

Training the learned order, re-tuning RRF's k and weights and scoring both out of fold all read
the same thing: what the arms returned for each query. `capture` asks each query once through the
real ensemble (an `EnsembleMemory` that records what reaches fusion) and keeps it as plain records;
`replay` turns a record back into the arm lists, plan and parsed query that fusion and
`ranking.candidate_features` take. Fusion is pure, so re-fusing a replayed query under another k or
weights is exactly what the ensemble would rank (before the stage after fusion), in microseconds.

A record holds only what fusion and the features read: each hit's id and score, whether its arm
carried the payload, and per memory the payload fields the features use.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ..config import FusionConfig
from ..conversation import DEFAULT_CONTEXT_TURNS
from ..errors import FusedMemoryError
from ..results import EntityCandidate, EntityRef, Hit, ParsedQuery, QueryPlan
from ..types import MemoryType, TimeWindow
from .data import EvalDataset
from .runner import Evaluator, Progress, quiet_progress

__all__ = ["Replayed", "capture", "replay", "save_records", "load_records", "PAYLOAD_FIELDS"]

#: The payload fields `ranking.candidate_features` reads.
PAYLOAD_FIELDS = ("text", "type", "event_at", "created_at", "entities", "answers", "stated", "metadata", "context",
                  "slot_keys", "session_id")


@dataclass(frozen=True)
class Replayed:
    """One captured query, ready for fusion and the features."""

    query_id: str
    conversation_id: str
    category: str
    gold: frozenset[str]
    results: Mapping[str, list[Hit]]
    plan: QueryPlan
    parsed: ParsedQuery


def _record(job: Any, outcomes: Mapping[str, Any]) -> dict[str, Any]:
    lists: dict[str, list[list[Any]]] = {}
    payloads: dict[str, dict[str, Any]] = {}
    for task in job.tasks:
        outcome = outcomes.get(task.label)
        if isinstance(outcome, BaseException) or outcome is None:
            continue
        by_arm, _ = outcome
        for arm in task.arms:
            hits, _note = by_arm.get(arm, ([], ""))
            rows = []
            for h in hits:
                carried = h.payload is not None or h.memory is not None
                rows.append([h.memory_id, h.score, int(carried)])
                if h.payload is not None and h.memory_id not in payloads:
                    payloads[h.memory_id] = {f: h.payload.get(f) for f in PAYLOAD_FIELDS}
            lists[arm] = rows
    plan, parsed = job.plan, job.parsed
    window = parsed.temporal_window
    return {
        "lists": lists, "payloads": payloads,
        "plan": {"arms": list(plan.arms), "weights": dict(plan.weights), "shortcut": plan.shortcut,
                 "type_hints": sorted(t.value for t in plan.type_hints),
                 "asked": [list(a) for a in plan.asked_relations]},
        "parsed": {"text": parsed.text, "now": parsed.now.isoformat(), "answer_type": parsed.answer_type,
                   "window": [window.start.isoformat(), window.end.isoformat()] if window else None,
                   "window_rule": parsed.temporal_rule,
                   "entities": [[r.text, [[c.entity_id, c.name] for c in r.candidates[:1]]]
                                for r in parsed.entity_refs]},
    }


def capture(dataset: EvalDataset, config: FusionConfig | None = None, *, progress: Progress = quiet_progress,
            path: str | None = None, embedder: Any = None, context_turns: int | None = None) -> list[dict[str, Any]]:
    """Ask every query with gold ids once through the ensemble (optimizer on, as shipped) and keep
    what reached fusion: one record per query (see the module docstring)."""
    from ..ensemble import EnsembleMemory

    records: list[dict[str, Any]] = []

    class _Recording(EnsembleMemory):
        def _finish(self, job: Any, outcomes: Mapping[str, Any], trace: Any = None) -> Any:
            records.append(_record(job, outcomes))
            return super()._finish(job, outcomes, trace)

    turns = DEFAULT_CONTEXT_TURNS if context_turns is None else context_turns
    with Evaluator(dataset, path=path, embedder=embedder, progress=progress, context_turns=turns) as ev:
        ev.ingest()
        ens = _Recording(ev.store, config or FusionConfig(order="rrf"))
        try:
            out = []
            queries = [q for q in dataset.queries if q.gold_ids]
            for n, q in enumerate(queries, 1):
                now = q.now or dataset.latest_time(q.conversation_id)
                records.clear()
                ens.retrieve(q.question, namespace=q.conversation_id, k=10, now=now)
                rec = records[-1]  # a shortcut that fell back records twice: the plan that answered
                rec.update(query_id=q.id, conversation_id=q.conversation_id, category=q.category,
                           gold=sorted(q.gold_ids))
                out.append(rec)
                if n % 100 == 0:
                    progress(f"captured {n}/{len(queries)} queries")
        finally:
            ens.close()
    return out


def save_records(records: Sequence[Mapping[str, Any]], path: str | Path) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r, separators=(",", ":")) + "\n")


def load_records(path: str | Path) -> list[dict[str, Any]]:
    try:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            return [json.loads(line) for line in fh]
    except (OSError, ValueError) as exc:
        raise FusedMemoryError(f"{path}: not a candidates cache ({exc})") from None


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text)


def replay(record: Mapping[str, Any]) -> Replayed:
    """The arm lists, plan and parsed query of one captured record."""
    payloads = record["payloads"]
    results = {arm: [Hit(mid, score, payload=payloads.get(mid) if carried else None) for mid, score, carried in rows]
               for arm, rows in record["lists"].items()}
    p, q = record["plan"], record["parsed"]
    plan = QueryPlan(type_hints=frozenset(MemoryType(t) for t in p["type_hints"]), arms=tuple(p["arms"]),
                     weights=p["weights"], shortcut=p["shortcut"],
                     asked_relations=tuple((e, r, bool(f)) for e, r, f in p.get("asked", ())))
    window = TimeWindow(_time(q["window"][0]), _time(q["window"][1])) if q["window"] else None
    refs = tuple(EntityRef(text, tuple(EntityCandidate(eid, name) for eid, name in cands))
                 for text, cands in q["entities"])
    parsed = ParsedQuery(text=q["text"], now=_time(q["now"]), entity_refs=refs, temporal_window=window,
                         answer_type=q["answer_type"], temporal_rule=q.get("window_rule"))
    return Replayed(record["query_id"], record["conversation_id"], record["category"], frozenset(record["gold"]),
                    results, plan, parsed)


def iter_replayed(records: Sequence[Mapping[str, Any]]) -> Iterator[Replayed]:
    return (replay(r) for r in records)
