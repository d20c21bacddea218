"""The eval JSONL format, and its loading and validation.

`memories.jsonl`: {"id", "conversation_id", "session_id", "speaker", "text", "event_at"}
`queries.jsonl`:  {"id", "conversation_id", "question", "category", "gold_ids", "now"}

Why a loader of our own rather than `json.loads` inline: the files come from other tools
(LoCoMo converters, users' exports), so the loader is where we are forgiving about what does not
matter (extra fields are ignored, times without a zone are read as UTC, since the library itself
refuses naive datetimes) and strict about what does (a missing id or text names the file and line).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..errors import FusedMemoryError
from ..types import Memory

__all__ = [
    "read_jsonl",
    "checked_dataset",
    "EvalDataError",
    "EvalMemory",
    "EvalQuery",
    "EvalDataset",
    "parse_time",
    "required_str",
    "optional_str",
    "load_memories",
    "load_queries",
    "load_dataset",
]


class EvalDataError(FusedMemoryError, ValueError):
    """An input file is missing, unreadable or has a malformed row (file and line given), or a time
    given on the command line (`--now`) is not ISO 8601."""


def parse_time(value: Any, where: str = "time") -> datetime | None:
    """ISO 8601 text -> aware datetime; no zone means UTC; empty or None -> None."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise EvalDataError(f"{where}: expected an ISO 8601 string, got {type(value).__name__}")
    text = value.strip()
    if text.endswith(("Z", "z")):  # Python < 3.11 fromisoformat does not read a trailing Z
        text = text[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        raise EvalDataError(f"{where}: {value!r} is not an ISO 8601 time") from None
    return dt if dt.tzinfo is not None and dt.utcoffset() is not None else dt.replace(tzinfo=timezone.utc)


@dataclass(frozen=True)
class EvalMemory:
    """One conversation turn to ingest; `conversation_id` becomes its namespace."""

    id: str
    conversation_id: str
    text: str
    session_id: str | None = None
    speaker: str | None = None
    event_at: datetime | None = None
    #: When it was said, when not at `event_at` (a note saved as a person says it: the personal-timeline
    #: set); None: at `event_at`, as a conversation's turns are.
    created_at: datetime | None = None

    def to_memory(self) -> Memory:
        """The library's memory for this turn: what eval ingests, so the loader can check each row
        with the library's own rules before anything is ingested."""
        return Memory(text=self.text, id=self.id, namespace=self.conversation_id, session_id=self.session_id,
                      event_at=self.event_at, created_at=self.created_at or self.event_at,
                      metadata={"speaker": self.speaker} if self.speaker else {})


@dataclass(frozen=True)
class EvalQuery:
    """One question with the memory ids that answer it. `now` is when it is asked (relative
    phrases like "last week" resolve against it); None means the conversation's latest memory time."""

    id: str
    conversation_id: str
    question: str
    category: str
    gold_ids: tuple[str, ...]
    now: datetime | None = None


@dataclass(frozen=True)
class EvalDataset:
    """Memories and queries, in file order."""

    memories: tuple[EvalMemory, ...]
    queries: tuple[EvalQuery, ...]
    #: What the loader let through but a reader of the numbers should know (see `load_dataset`).
    warnings: tuple[str, ...] = ()

    def conversations(self) -> tuple[str, ...]:
        """Conversation ids in order of first appearance among the memories."""
        return tuple(dict.fromkeys(m.conversation_id for m in self.memories))

    def latest_time(self, conversation_id: str) -> datetime | None:
        """The last `event_at` of a conversation: the default `now` for its queries."""
        times = [m.event_at for m in self.memories
                 if m.conversation_id == conversation_id and m.event_at is not None]
        return max(times) if times else None


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line; text that is not UTF-8 or not JSON names
    the file and line. Lines are decoded one by one, so the line named is the one at fault; a
    byte-order mark at the start (some Windows tools write one) is skipped."""
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise EvalDataError(f"cannot read {path}: {exc.strerror or exc}") from None
    with fh:
        for lineno, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise EvalDataError(f"{path}:{lineno}: not valid UTF-8 (byte {exc.start + 1} of the line)") from None
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise EvalDataError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise EvalDataError(f"{path}:{lineno}: expected a JSON object, got {type(row).__name__}")
            yield lineno, row


def required_str(row: dict[str, Any], key: str, where: str) -> str:
    """A field that must be there, as text: a number is read as its text; a list, object or boolean
    is refused (no text of one is what the writer meant)."""
    value = row.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise EvalDataError(f"{where}: missing {key!r}")
    if isinstance(value, (dict, list, bool)):
        raise EvalDataError(f"{where}: {key!r} must be a string, got {type(value).__name__}")
    return str(value)


def optional_str(row: dict[str, Any], key: str, where: str) -> str | None:
    """A field that may be missing or empty (None), else its text; a list, object or boolean is
    refused as `required_str` refuses it (its text, "['a']" or "True", is not what was meant)."""
    value = row.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, (dict, list, bool)):
        raise EvalDataError(f"{where}: {key!r} must be a string, got {type(value).__name__}")
    return str(value)


def load_memories(path: str | Path) -> tuple[EvalMemory, ...]:
    """Every memory row; ids must be unique within a conversation (they are upsert keys)."""
    path = Path(path)
    out: list[EvalMemory] = []
    seen: set[tuple[str, str]] = set()
    for lineno, row in read_jsonl(path):
        where = f"{path}:{lineno}"
        mem = EvalMemory(
            id=required_str(row, "id", where),
            conversation_id=required_str(row, "conversation_id", where),
            text=required_str(row, "text", where),
            session_id=optional_str(row, "session_id", where),
            speaker=optional_str(row, "speaker", where),
            event_at=parse_time(row.get("event_at"), f"{where}: event_at"),
        )
        try:
            mem.to_memory()  # the library's own checks, id included
        except FusedMemoryError as exc:
            raise EvalDataError(f"{where}: {exc}") from None
        key = (mem.conversation_id, mem.id)
        if key in seen:
            raise EvalDataError(f"{where}: duplicate memory id {mem.id!r} in conversation {mem.conversation_id!r}")
        seen.add(key)
        out.append(mem)
    return tuple(out)


#: Report column of the whole dataset; a category of that name would be two columns with one header.
RESERVED_CATEGORY = "overall"


def load_queries(path: str | Path) -> tuple[EvalQuery, ...]:
    """Every query row. `gold_ids` may be empty (such queries are excluded from the metrics);
    a missing category is reported as "uncategorized". Query ids must be unique within a
    conversation: a repeated one would be scored twice."""
    path = Path(path)
    out: list[EvalQuery] = []
    seen: set[tuple[str, str]] = set()
    for lineno, row in read_jsonl(path):
        where = f"{path}:{lineno}"
        gold = row.get("gold_ids")
        if gold is None:
            gold = []
        if not isinstance(gold, list) or not all(isinstance(g, (str, int)) and not isinstance(g, bool)
                                                 for g in gold):
            raise EvalDataError(f"{where}: 'gold_ids' must be a list of ids")
        category = optional_str(row, "category", where)
        if str(category).strip().lower() == RESERVED_CATEGORY:
            raise EvalDataError(f"{where}: category {category!r} is reserved for the report's overall column")
        out.append(EvalQuery(
            id=required_str(row, "id", where),
            conversation_id=required_str(row, "conversation_id", where),
            question=required_str(row, "question", where),
            category=category or "uncategorized",
            gold_ids=tuple(dict.fromkeys(str(g) for g in gold)),
            now=parse_time(row.get("now"), f"{where}: now"),
        ))
        key = (out[-1].conversation_id, out[-1].id)
        if key in seen:
            raise EvalDataError(f"{where}: duplicate query id {key[1]!r} in conversation {key[0]!r}")
        seen.add(key)
    return tuple(out)


def load_dataset(memories: str | Path, queries: str | Path) -> EvalDataset:
    """Both files, checked against each other. Refused: no memories, or no query with gold ids
    (there would be nothing to score). Warned about (`EvalDataset.warnings`), and scored as given,
    as qrels are: a scored query about a conversation with no memories (0 for every system), and a
    gold id that is not a memory of its query's conversation (a miss for every system). Converters
    differ on whether they drop evidence that points nowhere; the numbers should say it, not hide it."""
    return checked_dataset(load_memories(memories), load_queries(queries), memories, queries)


def checked_dataset(mems: tuple[EvalMemory, ...], qs: tuple[EvalQuery, ...], memories: object,
                    queries: object) -> EvalDataset:
    """`load_dataset`'s checks of memories and queries against each other, whatever file they came
    from (`memories` and `queries` name the source in messages)."""
    if not mems:
        raise EvalDataError(f"{memories}: no memories")
    if not any(q.gold_ids for q in qs):
        raise EvalDataError(f"{queries}: no query has gold_ids, so there is nothing to score")
    ids: dict[str, set[str]] = {}
    for m in mems:
        ids.setdefault(m.conversation_id, set()).add(m.id)
    scored = [q for q in qs if q.gold_ids]  # a query without gold is never asked: nothing to check
    orphans = [q.id for q in scored if q.conversation_id not in ids]
    missing = {q.id: gs for q in scored if q.conversation_id in ids
               if (gs := [g for g in q.gold_ids if g not in ids[q.conversation_id]])}
    warnings = []
    if orphans:
        warnings.append(f"{queries}: {len(orphans)} scored queries ask about a conversation with no memories in "
                        f"{memories} (each scores 0 for every system), e.g. {orphans[:3]}")
    if missing:
        eg = "; ".join(f"{q}: {gs[:3]}" for q, gs in list(missing.items())[:3])
        warnings.append(f"{queries}: {sum(map(len, missing.values()))} gold ids of {len(missing)} queries are not "
                        f"memories of their conversation in {memories} (each is a miss for every system), e.g. {eg}")
    return EvalDataset(mems, qs, tuple(warnings))
