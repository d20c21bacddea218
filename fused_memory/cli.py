"""`fused-memory` command line: demo | ingest | query | eval | bench."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from .conversation import DEFAULT_CONTEXT_TURNS, conversation_context
from .errors import FusedMemoryError, InvalidMemory
from .terminal import terminal_safe

__all__ = ["main", "build_parser"]


def _parse_now(value: Any, what: str = "--now") -> datetime | None:
    """ISO 8601 -> aware datetime (no zone: UTC), read as the eval files are; anything else is a
    one-line error naming `what`, not a traceback."""
    from .evaluation.data import parse_time

    return parse_time(value, what)


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo_data import DEMO_NAMESPACE, DEMO_NOW, DEMO_QUERIES, DEMO_RELATIONS, demo_memories
    from .ensemble import EnsembleMemory
    from .store.memory_store import MemoryStore

    tmp = None
    path = args.path
    if path is None:
        tmp = tempfile.TemporaryDirectory(prefix="fused-memory-demo-")
        path = tmp.name
    try:
        store = MemoryStore.embedded(path)
        with store:
            stored = store.add(demo_memories())
            for src, rel, dst, kind, conf in DEMO_RELATIONS:
                store.relate(src, rel, dst, namespace=DEMO_NAMESPACE, kind=kind, confidence=conf)
            print(f"ingested {len(stored)} memories into {path} (namespace {DEMO_NAMESPACE!r}); "
                  f"'today' is {DEMO_NOW:%A %Y-%m-%d}\n")
            ens = EnsembleMemory(store)
            for q in (args.queries or DEMO_QUERIES):
                result = ens.retrieve(q, namespace=DEMO_NAMESPACE, k=args.k, now=DEMO_NOW)
                print("=" * 100)
                print(terminal_safe(f"Q: {q}"))
                print(terminal_safe(result.explain()))
                print()
            ens.close()
    finally:
        if tmp is not None:
            tmp.cleanup()
    return 0


def cmd_ingest(args: argparse.Namespace) -> int:
    from .store.memory_store import MemoryStore
    from .types import Memory

    from .evaluation.data import optional_str, read_jsonl, required_str

    def memory(lineno: int, row: dict[str, Any]) -> Memory:
        where = f"{args.file}:{lineno}"
        try:
            return Memory(
                text=row.get("text", ""), id=required_str(row, "id", where) if row.get("id") not in (None, "") else "",
                namespace=str(row.get("namespace") or row.get("conversation_id") or args.namespace),
                type=row.get("type"), predicate=row.get("predicate"),
                event_at=_parse_now(row.get("event_at"), f"{where}: event_at"),
                session_id=optional_str(row, "session_id"),
                entities=row.get("entities") or (), context=row.get("context"))
        except FusedMemoryError as exc:
            raise InvalidMemory(str(exc) if str(exc).startswith(where) else f"{where}: {exc}") from None

    memories = [memory(lineno, row) for lineno, row in read_jsonl(Path(args.file))]
    memories = conversation_context(memories, args.context_turns)
    with MemoryStore.embedded(args.path) as store:
        stored = store.add(memories, show_progress=True if len(memories) > 200 else None)
    print(f"ingested {len(stored)} memories into {args.path}")
    return 0


def cmd_query(args: argparse.Namespace) -> int:
    from .ensemble import EnsembleMemory
    from .store.memory_store import MemoryStore

    now = _parse_now(args.now)  # before the store opens: a bad --now must not create a store
    with MemoryStore.embedded(args.path) as store:
        ens = EnsembleMemory(store)
        result = ens.retrieve(args.query, namespace=args.namespace, k=args.k, now=now,
                              types=args.types.split(",") if args.types else None)
        ens.close()
    if args.json:
        print(json.dumps(result.to_json(), indent=2, default=str))
    elif args.explain:
        print(terminal_safe(result.explain()))
    else:
        for h in result.hits:
            print(f"{h.rank:>3}. {h.score:.4f}  {terminal_safe(h.memory.text, one_line=True)}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fused-memory", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    d = sub.add_parser("demo", help="ingest a built-in sample and answer queries with explanations")
    d.add_argument("--path", help="store directory (default: a temporary one)")
    d.add_argument("--k", type=int, default=5)
    d.add_argument("queries", nargs="*", help="your own queries instead of the built-in ones")
    d.set_defaults(fn=cmd_demo)

    i = sub.add_parser("ingest", help="ingest a JSONL file of memories")
    i.add_argument("file")
    i.add_argument("--path", default="./memdata")
    i.add_argument("--namespace", default="default")
    i.add_argument("--context-turns", type=int, default=DEFAULT_CONTEXT_TURNS, metavar="N",
                   help="preceding turns of the same session indexed with each memory (0: none)")
    i.set_defaults(fn=cmd_ingest)

    q = sub.add_parser("query", help="query a store")
    q.add_argument("query")
    q.add_argument("--path", default="./memdata")
    q.add_argument("--namespace", default="default")
    q.add_argument("--k", type=int, default=10)
    q.add_argument("--now", help="ISO time the query is asked at (default: now)")
    q.add_argument("--types", help="comma-separated memory types to force")
    q.add_argument("--explain", action="store_true")
    q.add_argument("--json", action="store_true")
    q.set_defaults(fn=cmd_query)

    from .evaluation.cli import add_commands
    add_commands(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.fn(args) or 0)
    except FusedMemoryError as exc:
        print(terminal_safe(f"fused-memory: error: {exc}"), file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
