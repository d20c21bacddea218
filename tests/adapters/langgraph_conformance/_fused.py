"""The one thing the ported LangGraph store tests change: the constructor.

Where LangGraph's tests build `InMemoryStore(**kw)`, `SqliteStore.from_conn_string(conn, **kw)` or
`PostgresStore.from_conn_string(uri, **kw)`, these build a `FusedMemoryStore` over a real embedded
`MemoryStore` (qdrant-edge shard, rank-bm25, the embedded graph) in a fresh temporary directory, with
the same keyword arguments (`index=`, `ttl=`). Without an `index` config the store embeds with the
project's `HashingEmbedder`; with one, LangGraph's own `embed` (the tests' `CharacterEmbeddings`, a
real LangChain `Embeddings`) embeds, through `FusedMemoryStore`'s support for LangGraph's index config.
NER is off: the stores are built per test, and entity extraction is not what LangGraph's contract checks.

Every store made here is closed, and its directory removed, after the test (`conftest.py`).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from fused_memory.embeddings import HashingEmbedder
from fused_memory.store.memory_store import MemoryStore
from langchain_fused_memory import FusedMemoryStore

__all__ = ["fused_store", "fused_store_context", "afused_store_context", "close_all"]

_MADE: list[tuple[FusedMemoryStore, str]] = []


def fused_store(*_conn: Any, index: Any = None, ttl: Any = None, **_plumbing: Any) -> FusedMemoryStore:
    """A `FusedMemoryStore` for one test. Positional arguments (LangGraph's connection string) and the
    SQL stores' plumbing keywords (`pool_config`, ...) name nothing this store has: ignored."""
    path = tempfile.mkdtemp(prefix="lg-conformance-")
    memory = MemoryStore.embedded(path, embedder=HashingEmbedder(dim=256), ner=False)
    store = FusedMemoryStore(memory, index=index, ttl=ttl)
    _MADE.append((store, path))
    return store


@contextmanager
def fused_store_context(*conn: Any, **kw: Any) -> Iterator[FusedMemoryStore]:
    """`with SqliteStore.from_conn_string(...) as store:`, swapped."""
    yield fused_store(*conn, **kw)


@asynccontextmanager
async def afused_store_context(*conn: Any, **kw: Any) -> AsyncIterator[FusedMemoryStore]:
    """`async with AsyncSqliteStore.from_conn_string(...) as store:`, swapped."""
    yield fused_store(*conn, **kw)


def close_all() -> None:
    while _MADE:
        store, path = _MADE.pop()
        store.stop_ttl_sweeper()
        store.store.close()
        shutil.rmtree(path, ignore_errors=True)


# ---------------------------------------------------------------- the inherent differences (xfail, strict)
#: LangGraph's score is the cosine similarity of the query and the item; ours is the fused score.
FUSED_SCORE = ("SearchItem.score is the fused (score-weighted RRF) score of the arms that found the item, "
               "not the cosine similarity LangGraph's stores return")
#: LangGraph embeds each index field on its own and ranks an item by its best field.
ONE_VECTOR_PER_ITEM = ("one vector per item (its index fields' text joined, and BM25 over the same text), where "
                       "LangGraph embeds every field on its own and scores an item by its best field")
#: LangGraph's async stores refuse their sync methods in the event loop's thread.
ONE_STORE_SYNC_AND_ASYNC = ("one store serves sync and async: its sync methods work in an event loop's thread, "
                            "which LangGraph's async-only stores refuse with InvalidStateError")
#: SQLite's guard against SQL injection through filter keys.
NO_SQL = ("SqliteStore refuses filter keys that could inject SQL; there is no SQL here: a key is matched as text, "
          "as InMemoryStore matches it")
#: Postgres keeps expired rows visible until swept unless `omit_expired` is set.
EXPIRED_IS_GONE = ("an expired item is invisible to every read at once (the engine filters on its expiry); "
                   "PostgresStore shows it until the sweep unless its ttl config sets omit_expired")
