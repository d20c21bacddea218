"""Memory <-> payload. The vector store's payload is the source of truth (BM25 and the embedded
graph are rebuilt from it), so this is the one place that knows the on-disk shape."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from ..errors import FusedMemoryError
from ..times import STATED  # a list of {"start", "end"}: filtered as nested objects, both ends together
from ..types import EntityMention, Memory, MemoryType, TimeWindow
from ..validation import FIRST_STORABLE, LAST_STORABLE, is_storable, thaw
from .wording import WORDING, read_text
from .wording import to_json as wording_json

__all__ = ["LAYOUT_VERSION", "UNRANKED", "STATED", "SLOT_KEYS", "to_payload", "from_payload", "payload_mentions",
           "stored_time", "stated_windows"]

#: Bumped when the payload shape changes; a store of another layout is refused on open.
LAYOUT_VERSION = 1


#: The payload key and value of a memory kept out of ranking (`Memory.indexed` False); absent otherwise.
UNRANKED = ("index", "off")


def _ts(value: datetime | None) -> float | None:
    return value.timestamp() if value is not None else None


def stored_time(value: Any, iso: Any = None) -> datetime | None:
    """The stored instant with the offset it was given: from its ISO text when the payload has it
    (exact to the microsecond at any date, and in the writer's zone: a move "on June 1" written
    at +02:00 read back in UTC is May 31; a float of epoch seconds is exact only for years
    ~1700-2240), else, in UTC, from the epoch seconds (which the range filters use, so times
    still sort and filter by their instant). A time outside what a store can
    hold (written before such times were refused) reads back as the nearer end of the range, so
    one bad value cannot keep a store from opening."""
    if value is None:
        return None
    dt = _read(lambda: _aware(datetime.fromisoformat(iso))) if isinstance(iso, str) else None
    dt = dt or _read(lambda: datetime.fromtimestamp(float(value), tz=timezone.utc))
    if dt is None or not is_storable(dt):
        return FIRST_STORABLE if float(value) < 0 else LAST_STORABLE
    return dt


def _aware(value: datetime) -> datetime:
    """An ISO text without a zone is not what `to_payload` writes; read it as UTC, not as local."""
    return value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)


def _read(parse: Any) -> datetime | None:
    try:
        return parse()
    except (OverflowError, ValueError, OSError):
        return None


def to_payload(m: Memory, entity_kinds: Sequence[str | None] | None = None,
               answers: Sequence[str] = (), slot_keys: Sequence[str] = ()) -> dict[str, Any]:
    """Epoch floats for times (range filters in both Qdrant engines and FalkorDB all take floats).
    `entity_kinds` (NER labels, parallel to `m.entities`) lets the graph be re-linked from the
    payload exactly as ingest linked it; payloads without it read back with unknown kinds.
    `answers` (derived from the text at ingest, `store.ingest.answer_tags`; indexed) tags what the
    memory can answer: "time" when it states one, for "when did...?" questions. `slot_keys` (the
    slots it states, `store.ingest.slot_keys`; indexed) let the versions of an asked slot be read.
    Its wording (`wording.WORDING`: text key digest, content words, values, negations) is read here,
    once, so the stage after fusion compares fields instead of reading the text again."""
    kinds = list(entity_kinds) if entity_kinds is not None else []
    return {
        "memory_id": m.id,
        "namespace": m.namespace,
        "text": m.text,
        "predicate": m.predicate,
        "type": m.type.value if m.type else None,
        "event_at": _ts(m.event_at),
        "event_at_iso": m.event_at.isoformat() if m.event_at else None,
        "created_at": _ts(m.created_at),
        "created_at_iso": m.created_at.isoformat() if m.created_at else None,
        "entities": list(m.entities),
        "entity_kinds": kinds if len(kinds) == len(m.entities) else [None] * len(m.entities),
        "session_id": m.session_id,
        "context": m.context,
        "answers": list(answers),
        SLOT_KEYS: list(slot_keys),
        STATED: [{"start": w.start.timestamp(), "end": w.end.timestamp()} for w in m.stated_times],
        "stated_iso": [[w.start.isoformat(), w.end.isoformat()] for w in m.stated_times],
        "metadata": thaw(m.metadata),
        WORDING: wording_json(read_text(m.text)),
        **({"expires_at": _ts(m.expires_at)} if m.expires_at is not None else {}),
        **({} if m.indexed else {UNRANKED[0]: UNRANKED[1]}),
        **({"metadata_json": json.dumps(thaw(m.metadata), separators=(",", ":"))} if _has_float(m.metadata) else {}),
    }


#: The payload key of the slot keys a memory states (`query.slots`, its predicate's too: the store
#: derives them), indexed, so the versions of the slot a question asks are read by filter.
SLOT_KEYS = "slot_keys"


def _has_float(value: Any) -> bool:
    """qdrant-edge reads ~1 in 6 floats back one ULP off (its JSON number parsing is not exact), so
    metadata holding floats is also kept as JSON text, which `from_payload` prefers."""
    if isinstance(value, float):
        return True
    if isinstance(value, Mapping):
        return any(_has_float(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_float(v) for v in value)
    return False


def from_payload(p: Mapping[str, Any]) -> Memory:
    """Rebuild a Memory. Times come back with the offset they were written with (UTC for a payload
    that holds only epoch seconds); the instant is preserved exactly."""
    return Memory(
        id=str(p["memory_id"]), namespace=str(p["namespace"]), text=str(p["text"]),
        predicate=p.get("predicate"),
        type=MemoryType(p["type"]) if p.get("type") else None,
        event_at=stored_time(p.get("event_at"), p.get("event_at_iso")),
        created_at=stored_time(p.get("created_at"), p.get("created_at_iso")),
        entities=tuple(p.get("entities") or ()), session_id=_session(p.get("session_id")),
        metadata=_metadata(p), context=p.get("context"),
        expires_at=stored_time(p.get("expires_at")), indexed=p.get(UNRANKED[0]) != UNRANKED[1],
        stated_times=stated_windows(p),
    )


def stated_windows(p: Mapping[str, Any]) -> tuple[TimeWindow, ...]:
    """The times a payload's text states (`Memory.stated_times`), with the offsets they were read in;
    a payload written before they were read, or a damaged entry, states none (or fewer)."""
    spans = p.get(STATED)
    if not isinstance(spans, list) or not spans:
        return ()
    isos_field = p.get("stated_iso")
    isos: list[Any] = isos_field if isinstance(isos_field, list) else []
    out = []
    for i, span in enumerate(spans):
        iso = isos[i] if i < len(isos) and isinstance(isos[i], list) and len(isos[i]) == 2 else (None, None)
        try:
            start, end = stored_time(span["start"], iso[0]), stored_time(span["end"], iso[1])
            if start is not None and end is not None:
                out.append(TimeWindow(start, end))
        except (KeyError, TypeError, ValueError, FusedMemoryError):
            continue
    return tuple(out)


def _session(value: Any) -> str | None:
    """Stores written before session ids had to be text may hold another JSON value: read it as
    its text rather than refuse a memory that was accepted when it was written."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value) if isinstance(value, (list, dict)) else str(value)  # as str() grouped them


def _metadata(p: Mapping[str, Any]) -> Any:
    text = p.get("metadata_json")
    return json.loads(text) if isinstance(text, str) else p.get("metadata") or {}


def payload_mentions(p: Mapping[str, Any]) -> list[EntityMention]:
    """The entity mentions a payload records, with their kinds when it has them."""
    names = list(p.get("entities") or ())
    kinds = list(p.get("entity_kinds") or ())
    if len(kinds) != len(names):
        kinds = [None] * len(names)
    return [EntityMention(str(n), k if isinstance(k, str) else None) for n, k in zip(names, kinds, strict=True)]
