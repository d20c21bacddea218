"""How both graph backends check and encode what they store: keys, names, mentions, relations.

Split from `traversal.py` because it is a separate concern: that module scores and walks the
graph; this one only decides what may be written and in which form (fixed-size hashed keys, names
without NUL or lone surrogates, confidences and times both backends store as the same number).
"""

from __future__ import annotations

import hashlib
import math
import numbers
from collections.abc import Sequence
from datetime import datetime

from ...errors import QueryError
from ...text import normalize_entity_id
from ...types import EntityMention, Relation
from ...validation import MAX_NAME_BYTES, require_aware, require_clean, require_storable

__all__ = [
    "RELATION_KINDS", "MAX_KIND_CHARS", "entity_key", "memory_key", "token_key", "rel_key", "quantize_confidence",
    "epoch_ms", "check_name", "check_namespace", "check_relation", "clean_mentions", "CO_MENTION_REL",
]

#: The label traversal gives co-mention edges; reserved, so no explicit relation can take it.
CO_MENTION_REL = "co_mentioned"

RELATION_KINDS: tuple[str, ...] = ("structural", "semantic", "lifecycle")
MAX_KIND_CHARS = 64


def _digest(*parts: str) -> str:
    return hashlib.blake2b("\x1f".join(parts).encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def entity_key(namespace: str, entity_id: str) -> str:
    """A fixed-size key for (namespace, entity id). Servers match on keys, never on user strings, so
    a 10 KB name costs the same as a short one and never reaches a size-limited parameter."""
    return "e" + _digest("e", namespace, entity_id)


def memory_key(namespace: str, memory_id: str) -> str:
    return "m" + _digest("m", namespace, memory_id)


def token_key(namespace: str, token: str) -> str:
    return "t" + _digest("t", namespace, token)


def rel_key(rel: str) -> str:
    return "r" + _digest("r", rel)


def quantize_confidence(value: float) -> float:
    """Confidence clamped to [0, 1] and rounded to 6 decimals. FalkorDB's Bolt listener prints float
    parameters with 6 significant digits; rounding first makes both backends store the same number."""
    v = float(value)
    if not math.isfinite(v):
        raise QueryError(f"confidence must be a finite number, got {value!r}")
    return round(min(1.0, max(0.0, v)), 6)


def epoch_ms(when: datetime | None) -> int | None:
    """Aware datetime -> integer epoch milliseconds. Integers, because FalkorDB has no datetime type
    and would print an epoch float parameter as 1.71e+09."""
    if when is None:
        return None
    return int(round(require_aware(when, "relation time").timestamp() * 1000))


def check_name(value: object, what: str, *, entity: bool = True) -> str:
    """A string a graph stores: no NUL, no lone surrogate (SQLite and the Bolt driver raise on those,
    FalkorDB cuts a value at a NUL), at most MAX_NAME_BYTES of UTF-8, also once normalized for an
    entity name (NFKC can grow a string). Returns it unchanged."""
    if not isinstance(value, str):
        raise QueryError(f"{what} must be a string, got {type(value).__name__}")
    require_clean(value, what, QueryError)
    if _oversize(value) or (entity and _oversize(normalize_entity_id(value))):
        raise QueryError(f"{what} is longer than {MAX_NAME_BYTES} bytes of UTF-8 ({value[:40]!r}...)")
    return value


def _oversize(value: str) -> bool:
    return len(value) * 4 > MAX_NAME_BYTES and len(value.encode()) > MAX_NAME_BYTES


def check_namespace(namespace: object) -> str:
    if not isinstance(namespace, str) or not namespace.strip():
        raise QueryError("namespace must be a non-empty string")
    return check_name(namespace, "namespace", entity=False)


def check_relation(rel: Relation) -> tuple[str, str, str]:
    """Validate a relation; returns (src id, dst id, rel label)."""
    if rel.kind not in RELATION_KINDS:
        raise QueryError(f"relation kind must be one of {RELATION_KINDS}, not {rel.kind!r}")
    if not isinstance(rel.rel, str) or not rel.rel.strip():
        raise QueryError("relation label must be a non-empty string")
    check_name(rel.rel, "relation label", entity=False)
    if not any(ch.isalnum() for ch in rel.rel):
        raise QueryError(f"relation label {rel.rel!r} has no letter or digit; name the relation (e.g. 'reports_to')")
    if rel.rel.strip() == CO_MENTION_REL:
        raise QueryError(f"relation label {CO_MENTION_REL!r} is reserved for co-mentions; name the relation")
    src, dst = normalize_entity_id(check_name(rel.src, "relation source")), \
        normalize_entity_id(check_name(rel.dst, "relation target"))
    if not src or not dst:
        raise QueryError(f"relation endpoints must be non-empty names: {rel.src!r}, {rel.dst!r}")
    conf = rel.confidence  # True and "0.5" were taken as 1.0 and 0.5
    if isinstance(conf, bool) or not isinstance(conf, numbers.Real) or not 0.0 <= float(conf) <= 1.0:
        raise QueryError(f"relation confidence must be a number in [0, 1], got {conf!r}")
    for name, when in (("valid_from", rel.valid_from), ("valid_to", rel.valid_to)):
        if when is not None:
            require_storable(when, f"relation {name}")
    if rel.valid_from is not None and rel.valid_to is not None and rel.valid_from > rel.valid_to:
        raise QueryError(f"relation valid_from {rel.valid_from} is after valid_to {rel.valid_to}")
    return src, dst, rel.rel.strip()


def clean_mentions(mentions: Sequence[EntityMention | str]) -> list[tuple[str, str, str | None]]:
    """(id, display name, kind) per distinct entity id, first spelling wins, the first non-empty
    kind wins; names that normalize to nothing are dropped."""
    names: dict[str, str] = {}
    kinds: dict[str, str | None] = {}
    for m in mentions:
        name, kind = (m, None) if isinstance(m, str) else (m.name, m.kind)
        eid = normalize_entity_id(check_name(name, "entity name", entity=False))
        if _oversize(eid):
            raise QueryError(f"entity name is longer than {MAX_NAME_BYTES} bytes of UTF-8 once normalized")
        if not eid:
            continue
        names.setdefault(eid, " ".join(name.split()))
        kind = (kind.strip()[:MAX_KIND_CHARS] or None) if isinstance(kind, str) else None
        if kinds.get(eid) is None:
            kinds[eid] = kind
    return [(eid, names[eid], kinds[eid]) for eid in names]

