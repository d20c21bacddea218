"""LangGraph's store configuration, read for `FusedMemoryStore`: the `index` config and the `ttl` config.

`index`
-------
LangGraph's `IndexConfig` as its stores take it: `embed` (a LangChain `Embeddings`, a function from
texts to vectors, sync or async, or a "provider:model" string that LangChain's `init_embeddings`
resolves), `dims` (checked against what `embed` returns, at the first write or search) and `fields`
(the value paths that are the text; `text_fields`, `SqliteStore`'s name for it, is the same thing).
`distance_type` may be "cosine", "l2" or "inner_product": on the unit vectors fused-memory stores they
rank alike, and the search is by cosine (scores are fused scores either way); `ann_index_config`
(pgvector's) names nothing here and is accepted as LangGraph's Postgres store takes it.

`embed` replaces the `MemoryStore`'s embedder before the store is opened (a `MemoryStore` embeds with
one model). A store that already holds memories written with another embedder refuses to open with
`EmbeddingMismatch`, as every `MemoryStore` does; one that is already open with another embedder is
refused at once.

`ttl`
-----
LangGraph's `TTLConfig`: `default_ttl` (minutes, for puts that give none), `refresh_on_read`
(whether `get` / `search` push the expiry back when the call does not say) and
`sweep_interval_minutes` (how often the sweeper started by `start_ttl_sweeper` deletes what
expired). `refresh_on_read` is read by `BaseStore` itself, which turns it into the `refresh_ttl` of
each read that does not give one (True without a config); the store then honours the op's flag
alone, as `PostgresStore` does, so an explicit `refresh_ttl=True` refreshes whatever the config.
A config that leaves `refresh_on_read` out is read as `SqliteStore` reads it: reads that do not ask
refresh nothing (`FusedMemoryStore.ttl_config` holds the key filled in). `SqliteStore` also gates an
explicit `refresh_ttl=True` on the config; LangGraph's Postgres TTL test needs it honoured.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fused_memory import ConfigurationError, EmbeddingMismatch, MemoryStore, MissingDependency
from fused_memory.embeddings import LangChainEmbedder, is_embedder

from .langgraph_items import index_fields

__all__ = ["IndexSettings", "TTLSettings", "index_settings", "ttl_settings", "use_embedder", "check_dims"]

_INDEX_KEYS = {"embed", "dims", "fields", "text_fields", "distance_type", "ann_index_config", "__tokenized_fields"}
#: The distances LangGraph's stores offer that order unit vectors alike: fused-memory normalizes every
#: embedding and searches by cosine, which ranks unit vectors as L2 distance and inner product do.
_DISTANCES = {"cosine", "l2", "inner_product"}
_TTL_KEYS = {"default_ttl", "refresh_on_read", "sweep_interval_minutes"}


@dataclass(frozen=True)
class IndexSettings:
    """What the store's `index` config says: the text paths, and the embedder when it names one."""

    fields: tuple[str, ...] | None = None
    embedder: Any = None
    dims: int | None = None


@dataclass(frozen=True)
class TTLSettings:
    """What the store's `ttl` config says (LangGraph's `TTLConfig`), checked."""

    default_ttl: float | None = None
    sweep_interval_minutes: float | None = None


def _resolved(embed: object) -> Any:
    """A LangChain `Embeddings` for `embed`, through LangGraph's own `ensure_embeddings` (which
    wraps functions and resolves "provider:model" with LangChain's `init_embeddings`)."""
    from langgraph.store.base.embed import ensure_embeddings

    if isinstance(embed, str):
        try:
            return ensure_embeddings(embed)
        except ImportError as exc:
            raise MissingDependency(f"index['embed']={embed!r} needs its provider's LangChain package: {exc}") from None
        except ValueError as exc:
            if "langchain" in str(exc) and "init_embeddings" in str(exc):
                raise MissingDependency(f"index['embed']={embed!r} is resolved by LangChain's init_embeddings: "
                                        "pip install 'langchain>=0.3.9' and the provider's package "
                                        f"(e.g. langchain-openai). {exc}") from None
            raise ConfigurationError(f"index['embed']={embed!r}: {exc}") from None
        except Exception as exc:  # the provider's own refusal (no API key, unknown model), named as it is
            raise ConfigurationError(f"index['embed']={embed!r} could not be built by init_embeddings: "
                                     f"{type(exc).__name__}: {exc}") from None
    if callable(embed) and not hasattr(embed, "embed_documents"):
        name = getattr(embed, "__qualname__", None) or type(embed).__name__
        return _Named(ensure_embeddings(embed), f"function:{name}", inspect.iscoroutinefunction(embed))
    if hasattr(embed, "embed_documents") and hasattr(embed, "embed_query"):
        return embed
    raise ConfigurationError(f"index['embed'] must be a LangChain Embeddings, a function from texts to vectors "
                             f"or a 'provider:model' string, got {type(embed).__name__}")


class _Named:
    """A wrapped embedding function under its own name (so two functions pin apart), and an async
    one run to completion: the store embeds off the event loop, in a worker thread."""

    def __init__(self, embeddings: Any, name: str, is_async: bool) -> None:
        self._embeddings, self.model, self._async = embeddings, name, is_async

    def _run(self, sync: str, asynchronous: str, arg: Any) -> Any:
        if not self._async:
            return getattr(self._embeddings, sync)(arg)
        import asyncio

        return asyncio.run(getattr(self._embeddings, asynchronous)(arg))

    def embed_documents(self, texts: list[str]) -> Any:
        return self._run("embed_documents", "aembed_documents", texts)

    def embed_query(self, text: str) -> Any:
        return self._run("embed_query", "aembed_query", text)


def index_settings(index: object) -> IndexSettings:
    if index is None:
        return IndexSettings()
    if not isinstance(index, Mapping):
        raise ConfigurationError(f"index must be a dict like LangGraph's IndexConfig "
                                 f"({{'dims': 1536, 'embed': embeddings, 'fields': ['text']}}), got {index!r}")
    unknown = sorted(set(index) - _INDEX_KEYS)
    if unknown:
        named = ", ".join(sorted(_INDEX_KEYS - {"__tokenized_fields"}))
        raise ConfigurationError(f"index takes LangGraph's keys ({named}), not {unknown}")
    distance = index.get("distance_type", "cosine")
    if distance not in _DISTANCES:
        raise ConfigurationError(f"index['distance_type'] must be one of {sorted(_DISTANCES)}, got {distance!r}")
    fields = index.get("fields", index.get("text_fields"))
    if isinstance(fields, str):
        fields = [fields]
    dims = index.get("dims")
    if dims is not None and (not isinstance(dims, int) or isinstance(dims, bool) or dims <= 0):
        raise ConfigurationError(f"index['dims'] must be a positive integer, got {dims!r}")
    embed = index.get("embed")
    # a fused-memory Embedder (HashingEmbedder, MiniLM) is used as it is; anything else as LangGraph reads it
    embedder = None if embed is None else embed if is_embedder(embed) else LangChainEmbedder(_resolved(embed))
    return IndexSettings(index_fields(fields, "index['fields']"), embedder, dims)


def use_embedder(store: MemoryStore, settings: IndexSettings) -> None:
    """Give `store` the index's embedder (see the module docstring). No I/O: an open store is
    compared by the embedder's name, a closed one is checked against its pin when it opens."""
    if settings.embedder is None:
        return
    if store.embedder is settings.embedder:
        return
    if getattr(store, "_open", False):
        have, want = store.embedder.id, settings.embedder.id
        if (have.name, have.dim) != (want.name, want.dim):
            raise EmbeddingMismatch(f"this MemoryStore is open with embedder {have}; index['embed'] is {want}. "
                                    "Give the embedder to MemoryStore(...) or leave 'embed' out")
        return
    store.embedder = settings.embedder


def check_dims(store: MemoryStore, settings: IndexSettings) -> None:
    """`dims` against what the embedder returns (its first embedding, or the probe it embeds)."""
    if settings.dims is not None and int(store.embedder.dim) != settings.dims:
        raise EmbeddingMismatch(f"index['dims'] is {settings.dims} but the embedder {store.embedder.id} "
                                f"returns {store.embedder.dim}-d vectors")


def _minutes(value: object, what: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigurationError(f"{what} must be a number of minutes, got {value!r}")
    return float(value)


def ttl_settings(ttl: object) -> TTLSettings | None:
    if ttl is None:
        return None
    if not isinstance(ttl, Mapping):
        raise ConfigurationError(f"ttl must be a dict like LangGraph's TTLConfig ({{'default_ttl': 60}}), got {ttl!r}")
    unknown = sorted(set(ttl) - _TTL_KEYS)
    if unknown:
        raise ConfigurationError(f"ttl takes {sorted(_TTL_KEYS)}, not {unknown}")
    refresh = ttl.get("refresh_on_read", False)  # BaseStore reads it; checked here, so a bad value fails at once
    if not isinstance(refresh, bool):
        raise ConfigurationError(f"ttl['refresh_on_read'] must be True or False, got {refresh!r}")
    sweep = _minutes(ttl.get("sweep_interval_minutes"), "ttl['sweep_interval_minutes']")
    if sweep is not None and sweep <= 0:
        raise ConfigurationError(f"ttl['sweep_interval_minutes'] must be > 0, got {sweep!r}")
    return TTLSettings(_minutes(ttl.get("default_ttl"), "ttl['default_ttl']"), sweep)
