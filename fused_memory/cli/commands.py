"""`fused-memory` command line: demo | ingest | query | eval | bench | mcp."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from ..conversation import DEFAULT_CONTEXT_TURNS, conversation_context
from ..errors import ConfigurationError, FusedMemoryError, InvalidMemory
from ..terminal import terminal_safe
from .helptext import DefaultsShown
from .paths import require_fresh_dir, store_path

__all__ = ["main", "build_parser", "INGEST_FIELDS"]


#: The flag that reads a time written without a zone as UTC; without it such a time is refused, as
#: the library and the MCP server refuse it (a guessed zone moves an event by hours).
ASSUME_UTC = "--assume-utc"


def _time(value: Any, what: str, assume_utc: bool) -> datetime | None:
    """ISO 8601 with a zone -> aware datetime; a naive time only with `--assume-utc`; anything else
    a one-line error naming `what` and the fix, not a traceback."""
    from ..agent_writes import parse_time

    return parse_time(value, what, assume_utc=assume_utc, utc_flag=ASSUME_UTC)


def _count(value: str) -> int:
    """argparse type for --context-turns: an integer >= 0, refused with the flag's name."""
    try:
        n = int(value)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {value!r}")
    return n


def cmd_demo(args: argparse.Namespace) -> int:
    from ..demo import DEMO_NAMESPACE, DEMO_NOW, DEMO_QUERIES, DEMO_RELATIONS, demo_memories
    from ..ensemble import EnsembleMemory
    from ..ensemble.options import check_options
    from ..store.memory_store import MemoryStore

    check_options(DEMO_NAMESPACE, args.k)  # before ingesting fifty memories, not after
    if args.path is not None:
        require_fresh_dir(args.path, "--path", "the demo writes its sample memories there (into a store you "
                                               "keep, they would stay)")
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
    from ..agent_writes import refuse_unknown
    from ..evaluation.data import optional_str, read_jsonl
    from ..store.memory_store import MemoryStore
    from ..types import Memory
    from ..validation import check_namespace

    try:  # the flag, named as such, before any line is blamed for it
        check_namespace(args.namespace)
    except FusedMemoryError as exc:
        raise ConfigurationError(f"--namespace {args.namespace!r}: {exc}") from None
    store_path(args.path, must_exist=False)
    first_line: dict[tuple[str, str], int] = {}

    def memory(lineno: int, row: dict[str, Any]) -> Memory:
        where = f"{args.file}:{lineno}"
        try:
            refuse_unknown(row, INGEST_FIELDS, "a line", kind="field")  # "typ" dropped would be a guess
            metadata = row.get("metadata") or {}
            if not isinstance(metadata, dict):
                raise InvalidMemory(f"'metadata' must be an object, got {type(metadata).__name__}")
            entities = row.get("entities") or []
            if not isinstance(entities, list):
                raise InvalidMemory(f"'entities' must be a list of names, got {type(entities).__name__}")
            m = Memory(
                text=row.get("text", ""), id=optional_str(row, "id", where) or "",
                namespace=(optional_str(row, "namespace", where) or optional_str(row, "conversation_id", where)
                           or args.namespace),
                type=row.get("type"), predicate=row.get("predicate"),
                event_at=_time(row.get("event_at"), f"{where}: event_at", args.assume_utc),
                session_id=optional_str(row, "session_id", where), entities=tuple(entities),
                context=row.get("context"), metadata=metadata)
        except FusedMemoryError as exc:
            raise InvalidMemory(str(exc) if str(exc).startswith(where) else f"{where}: {exc}") from None
        if row.get("id") not in (None, ""):  # an upsert key: a second row would replace the first unseen
            earlier = first_line.setdefault((m.namespace, m.id), lineno)
            if earlier != lineno:
                raise InvalidMemory(f"{where}: duplicate id {m.id!r} in namespace {m.namespace!r} "
                                    f"(first at line {earlier})")
        return m

    memories = [memory(lineno, row) for lineno, row in read_jsonl(Path(args.file))]
    memories = conversation_context(memories, args.context_turns)
    with MemoryStore.embedded(args.path) as store:
        # a bar only on a terminal: piped or logged, each redraw is a line of its own (100% twice)
        stored = store.add(memories, show_progress=len(memories) > 200 and sys.stderr.isatty())
    spaces = sorted({m.namespace for m in stored})
    named = (f" (namespace{'s' if len(spaces) > 1 else ''} {', '.join(map(repr, spaces[:10]))}"
             f"{', ...' if len(spaces) > 10 else ''})") if spaces else ""
    print(terminal_safe(f"ingested {len(stored)} memories into {args.path}{named}"))
    return 0


def cmd_query(args: argparse.Namespace) -> int:
    from ..ensemble import EnsembleMemory
    from ..ensemble.options import check_options
    from ..store.memory_store import MemoryStore

    check_options(args.namespace, args.k)  # before the store opens, as a bad --now
    now = _time(args.now, "--now", args.assume_utc)  # before the store opens: a bad --now must not create a store
    with MemoryStore.embedded(store_path(args.path, must_exist=True)) as store:
        if not store.count(args.namespace):  # a mistyped namespace is an error, not an empty answer
            others = [n for n in store.namespaces() if n != args.namespace]
            raise ConfigurationError(f"namespace {args.namespace!r} at {args.path} holds no memories"
                                     + (f"; it holds {', '.join(map(repr, others[:10]))} (--namespace)"
                                        if others else ""))
        ens = EnsembleMemory(store)
        types = args.types.split(",") if args.types else None
        if args.why_not is not None:  # why a memory is not in the top k: one line a finding
            why = ens.explain_miss(args.query, args.why_not, namespace=args.namespace, k=args.k, now=now, types=types)
            ens.close()
            if why.memory is None:
                raise ConfigurationError(f"--why-not {args.why_not!r}: no memory of that id in namespace "
                                         f"{args.namespace!r} (ids are shown by query --json)")
            print(terminal_safe(why.explain()))
            return 0
        result = ens.retrieve(args.query, namespace=args.namespace, k=args.k, now=now, min_score=args.min_score,
                              types=types)
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
    from importlib.metadata import PackageNotFoundError, version

    p = argparse.ArgumentParser(prog="fused-memory", description=__doc__)
    with contextlib.suppress(PackageNotFoundError):  # run from a source tree without an install
        p.add_argument("--version", action="version", version=f"%(prog)s {version('fused-memory')}")
    sub = p.add_subparsers(dest="command", required=True)
    shown = DefaultsShown

    d = sub.add_parser("demo", help="ingest a built-in sample and answer queries with explanations",
                       formatter_class=shown)
    d.add_argument("--path", help="a new or empty directory to keep the demo's store in (default: a temporary "
                                  "one, removed afterwards)")
    d.add_argument("--k", type=int, default=5, help="results per query")
    d.add_argument("queries", nargs="*", help="your own queries instead of the built-in ones")
    d.set_defaults(fn=cmd_demo)

    i = sub.add_parser("ingest", help="ingest a JSONL file of memories", formatter_class=shown,
                       description="Add (upsert by id) one memory per JSONL line to the embedded store at --path.",
                       epilog=_INGEST_FIELDS)
    i.add_argument("file", help="JSONL file, one memory object per line")
    i.add_argument("--path", default="./memdata", help="store directory (created if new)")
    i.add_argument("--namespace", default="default", help="namespace of rows that name none")
    i.add_argument("--context-turns", type=_count, default=DEFAULT_CONTEXT_TURNS, metavar="N",
                   help="preceding turns of the same session indexed with each memory (0: none)")
    i.add_argument(ASSUME_UTC, action="store_true", help="read an event_at written without a zone as UTC "
                                                         "(without it, such a line is refused)")
    i.set_defaults(fn=cmd_ingest)

    q = sub.add_parser("query", help="query a store", formatter_class=shown)
    q.add_argument("query")
    q.add_argument("--path", default="./memdata", help="store directory (made by ingest)")
    q.add_argument("--namespace", default="default", help="namespace to search")
    q.add_argument("--k", type=int, default=10, help="results")
    q.add_argument("--now", help="ISO time with a zone the query is asked at (default: now)")
    q.add_argument(ASSUME_UTC, action="store_true", help="read a --now written without a zone as UTC")
    q.add_argument("--types", help="comma-separated memory types, only those come back (fact, preference, event, "
                                   "entity)")
    q.add_argument("--why-not", metavar="ID", help="instead of the answer, why the memory ID is not in the top k: "
                                                   "what each retriever, fusion and each step after it did with it")
    q.add_argument("--min-score", type=float, default=None, metavar="S",
                   help="leave out hits whose fused score is below S (default: FusionConfig's, 0)")
    q.add_argument("--explain", action="store_true", help="the plan and each result's per-retriever scores")
    q.add_argument("--json", action="store_true", help="the whole retrieval as JSON")
    q.set_defaults(fn=cmd_query)

    from .evaluation import add_commands
    add_commands(sub)
    from .serve import add_command
    add_command(sub)
    return p


#: The fields a line of `ingest`'s JSONL may hold; any other is refused with file:line.
INGEST_FIELDS = ("text", "id", "namespace", "conversation_id", "type", "event_at", "session_id", "entities",
                 "predicate", "context", "metadata")

_INGEST_FIELDS = """\
fields of a line: "text" (required); "id" (default: derived from namespace and text; a repeated
id would replace the earlier row and is refused); "namespace" or "conversation_id" (default:
--namespace); "type" (fact, preference, event, entity; default: classified); "event_at" (ISO 8601
with a zone; without one, refused unless --assume-utc); "session_id"; "entities" (a list of names);
"predicate"; "context"; "metadata" (an object of your own fields). Any other field is refused, with
its file:line."""


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.fn(args) or 0)
    except FusedMemoryError as exc:
        print(terminal_safe(f"fused-memory: error: {exc}"), file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # no traceback; what `add` had committed stays, and a re-run upserts by id
        print("fused-memory: interrupted (memories stored before the interrupt are kept; re-running "
              "ingest adds the rest: ids are upsert keys)", file=sys.stderr)
        return 130

