"""Copy and pickle rules for objects that stand for open resources.

A `MemoryStore` holds the vector engine (its files, locked while open), the BM25 index and a
graph connection. Frameworks copy the objects that hold it: LangChain's `model_copy(deep=True)`
and `copy.deepcopy` of a retriever, a tool list copied per agent. A true copy of a store would be a
second owner of the same files and lock, and the engine cannot be copied anyway (the copy failed
deep inside with "cannot pickle EdgeShard"). So a copy of a store, shallow or deep, is the same
store, as with a database connection pool. An `EnsembleMemory` is settings and a thread pool over a
store: its copy is a new ensemble over the same store (`EnsembleMemory.__copy__`), so a copy's
settings and pool are its own. Pickling either is refused with a `NotPicklable` that says what to
send instead, since no process but the owner can use the open engine.
"""

from __future__ import annotations

from typing import Any, NoReturn

from .errors import NotPicklable

__all__ = ["SharedHandle", "refuse_pickle"]


def refuse_pickle(obj: object) -> NoReturn:
    raise NotPicklable(
        f"this {type(obj).__name__} holds open storage and threads and cannot be pickled; "
        "send its path (or server URLs) and open a new store on the other side")


class SharedHandle:
    """Mixin: `copy.copy` and `copy.deepcopy` return the object itself; pickling raises."""

    __slots__ = ()

    def __copy__(self) -> Any:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return self

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        refuse_pickle(self)
