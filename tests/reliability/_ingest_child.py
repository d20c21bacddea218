"""Child process of test_crash_durability: ingests into an embedded store in a loop until it is killed.

    python _ingest_child.py STORE LOG RUN [--ner] [--crash-at link:N | unlink:N | lexical:N | merge:N]

Before each operation it appends a `begin` line to LOG, after the call returned a `done` line, each
followed by fsync, so the parent knows exactly which operations completed and which one (at most)
was in flight when the SIGKILL came. Operations: add 1-3 new memories (70%), overwrite one with new
text and entities (15%), delete one (15%), over three namespaces. Every memory names at least one
entity given by the caller (and, with --ner, whatever spaCy finds), so "linked in the graph" is
checkable.

The real lexical and graph writes are wrapped by a small random sleep, which widens the windows
between the vector write and the later writes where a kill leaves the indexes disagreeing (the
case `open` must repair). The lexical index merges its log into a new postings file every 16
writes of a namespace (instead of after 1,024), so kills land in merges too. `--crash-at link:N`
kills the process itself right before the N-th graph link (unlink:N before the N-th unlink,
lexical:N before the N-th lexical add, after the vector write; merge:N once the N-th merge has
written its new postings file, before the index points at it): a crash at an exact point.
`replay` (imported by the test) reads LOG back.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import time
from pathlib import Path
from typing import Any

NAMESPACES = ("alpha", "beta", "gamma")
PEOPLE = ("Sarah Chen", "Tom Baker", "Priya Natarajan", "Lena Ortiz", "Omar Haddad", "Kenji Watanabe")
PROJECTS = ("Kestrel", "Osprey", "Heron", "Falcon")
CITIES = ("Paris", "Berlin", "Nairobi", "Lima")


def replay(log: Path) -> tuple[dict[tuple[str, str], dict[str, Any] | None], set[tuple[str, str]], int]:
    """-> (state, uncertain, completed ops). `state` maps (namespace, id) to the memory last written
    by a completed op (None once deleted); `uncertain` holds the keys of the op that began and never
    finished (killed in flight): each may hold its old or its new state, but consistently."""
    state: dict[tuple[str, str], dict[str, Any] | None] = {}
    uncertain: set[tuple[str, str]] = set()
    pending: dict[str, Any] | None = None
    done = 0
    if not log.exists():
        return state, uncertain, done
    for line in log.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:  # a torn last line: the op never completed
            continue
        if rec["s"] == "begin":
            if pending is not None:  # the previous run was killed after `begin`
                uncertain.update((i["ns"], i["id"]) for i in pending["items"])
            pending = rec
        elif rec["s"] == "done":
            assert pending is not None and pending["n"] == rec["n"], (pending, rec)
            for item in pending["items"]:
                key = (item["ns"], item["id"])
                state[key] = None if pending["op"] == "del" else item
                uncertain.discard(key)
            pending = None
            done += 1
    if pending is not None:
        uncertain.update((i["ns"], i["id"]) for i in pending["items"])
    return state, uncertain, done


def _append(fh: Any, rec: dict[str, Any]) -> None:
    fh.write(json.dumps(rec) + "\n")
    fh.flush()
    os.fsync(fh.fileno())


def main(argv: list[str]) -> None:
    store_path, log_path, run = Path(argv[1]), Path(argv[2]), int(argv[3])
    ner = "--ner" in argv
    crash_at = argv[argv.index("--crash-at") + 1].split(":") if "--crash-at" in argv else None
    rng = random.Random(run * 7919 + 1)

    from fused_memory.backends.lexical import stored
    from fused_memory.backends.lexical.bm25 import _Shard
    from fused_memory.embeddings import HashingEmbedder
    from fused_memory.store.memory_store import MemoryStore
    from fused_memory.types import Memory

    _Shard.MERGE_MIN = 16  # merges every few writes, so kills land in them

    state, uncertain, _ = replay(log_path)
    live = sorted(k for k, v in state.items() if v is not None and k not in uncertain)
    store = MemoryStore.embedded(store_path, embedder=HashingEmbedder(dim=64), ner=ner)
    store.open()
    graph = store.graph
    assert graph is not None
    calls = {"link": 0, "unlink": 0, "lexical": 0, "merge": 0}

    def crash_if(kind: str) -> None:
        calls[kind] += 1
        if crash_at and crash_at[0] == kind and calls[kind] == int(crash_at[1]):
            os.kill(os.getpid(), signal.SIGKILL)

    def guarded(kind: str, real: Any) -> Any:
        def call(*args: Any, **kw: Any) -> Any:
            crash_if(kind)
            time.sleep(rng.uniform(0, 0.004))  # widen the vector-written, graph-not-yet window
            return real(*args, **kw)
        return call

    def merged(real: Any) -> Any:
        def call(*args: Any, **kw: Any) -> Any:
            size = real(*args, **kw)
            crash_if("merge")  # the new file is written; the index does not point at it yet
            time.sleep(rng.uniform(0, 0.004))
            return size
        return call

    graph.link = guarded("link", graph.link)  # type: ignore[method-assign]
    graph.unlink = guarded("unlink", graph.unlink)  # type: ignore[method-assign]
    store.lexical.add = guarded("lexical", store.lexical.add)  # type: ignore[method-assign]
    stored.write_segment = merged(stored.write_segment)  # type: ignore[assignment]

    def item(ns: str, mid: str, n: int) -> dict[str, Any]:
        person, project = rng.choice(PEOPLE), rng.choice(PROJECTS)
        token = f"tok{run}x{n}"
        text = f"{person} discussed the {project} plan in {rng.choice(CITIES)}, note {token}"
        return {"ns": ns, "id": mid, "token": token, "text": text, "entities": [project]}

    if ner:  # load spaCy before saying ready, so the kill lands in ingest rather than in the model load
        store.extractor.extract([Memory(text="Sarah Chen flew to Paris", namespace="warm-up")])
    with open(log_path, "a", encoding="utf-8") as fh:
        _append(fh, {"s": "ready", "run": run})
        n = 0
        while True:
            n += 1
            roll = rng.random()
            if roll < 0.7 or len(live) < 5:
                ns = rng.choice(NAMESPACES)
                items = [item(ns, f"r{run}-{n}-{j}", n * 10 + j) for j in range(rng.randint(1, 3))]
                op = "add"
            else:
                key = live[rng.randrange(len(live))]
                items = [item(key[0], key[1], n * 10)]
                op = "upsert" if roll < 0.85 else "del"
            rec = {"s": "begin", "n": f"{run}:{n}", "op": "del" if op == "del" else "add", "items": items}
            _append(fh, rec)
            if op == "del":
                store.delete(items[0]["ns"], [items[0]["id"]])
                live.remove((items[0]["ns"], items[0]["id"]))
            else:
                store.add([Memory(text=i["text"], namespace=i["ns"], id=i["id"], entities=tuple(i["entities"]))
                           for i in items])
                live.extend((i["ns"], i["id"]) for i in items if (i["ns"], i["id"]) not in live)
            _append(fh, {"s": "done", "n": rec["n"]})


if __name__ == "__main__":
    main(sys.argv)
