"""The six fused-memory retrievers as native LlamaIndex `BaseRetriever`s.

Same contract as the LangChain adapter (both share `fused_memory.adapters`, which imports
neither framework): the ensemble class calls `EnsembleMemory.retrieve` / `aretrieve`, a single-arm
class calls it restricted to its arm (on an `optimizer=False` ensemble unless one is given, so the arm
runs whenever it can). `_aretrieve` awaits the core's `aretrieve`, so an event loop
keeps running while the arms search (the base class's default would run the sync path on the loop).
Callback (`CBEventType.RETRIEVE`) and instrumentation (`RetrievalStart/EndEvent`, span) events are
emitted by the base class's `retrieve` / `aretrieve`, exactly as for any LlamaIndex retriever.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any, ClassVar

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks.base import CallbackManager
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from fused_memory import BUILTIN_ARMS, ArmRegistry, EnsembleMemory, FusedHit, MemoryStore, MemoryType, Retrieval
from fused_memory.adapters import (
    ARM_RETRIEVERS,
    LLM_HIDDEN_KEYS,
    RETRIEVAL_KEYS,
    CallOptions,
    answered,
    arm_class,
    bound_ensemble,
    hit_metadata,
    resolve_ensemble,
)

__all__ = [
    "FusedMemoryRetriever",
    "DenseMemoryRetriever",
    "BM25MemoryRetriever",
    "GraphMemoryRetriever",
    "TemporalMemoryRetriever",
    "TypeFilterMemoryRetriever",
    "EnsembleMemoryRetriever",
    "MemoryNode",
    "to_nodes",
    "node_score",
    "arm_retriever",
]


#: Metadata that is not the memory's identity: this retrieval's facts, and when it was written (re-adding
#: an unchanged memory stamps a new `created_at`; a re-sync must not make every node look changed).
_NOT_IDENTITY = frozenset((*RETRIEVAL_KEYS, "created_at"))


class MemoryNode(TextNode):
    """A `TextNode` whose `hash` is the memory's (its text and stored fields), not the retrieval's.

    `TextNode.hash` covers all metadata, and a node's metadata here also carries this retrieval's
    score, rank and explanation, so one memory found by two retrievers (or two generated queries)
    had two hashes: `QueryFusionRetriever`, which fuses by hash, never added its ranks up, and its
    "simple" mode returned fewer nodes than asked. Serialized, it is a plain `TextNode`; read back
    through `TextNode.from_dict` or a docstore it is one, and its hash is `TextNode`'s again."""

    @property
    def hash(self) -> str:
        identity = {key: value for key, value in self.metadata.items() if key not in _NOT_IDENTITY}
        text = self.text + json.dumps(identity, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def node_score(hit: FusedHit, arm: str | None) -> float:
    """What `NodeWithScore.score` holds: the fused score for the ensemble; for a one-arm retriever,
    that arm's own score in [0, 1] (cosine for dense, normalized BM25, hop score...), which is what
    LlamaIndex's `SimilarityPostprocessor(similarity_cutoff=...)` and users read as similarity.
    (The fused score of one arm is w * sqrt(s) / (k + rank), 0.1 for a 0.77 cosine: a cutoff of
    0.5 dropped every node.) The fused score stays in `metadata["score"]`, as on LangChain."""
    if arm is not None:
        for c in hit.contributions:
            if c.arm == arm:
                return c.raw_score
    return hit.score


def to_nodes(retrieval: Retrieval, arm: str | None = None) -> list[NodeWithScore]:
    """One `NodeWithScore` per fused hit, in the core's order; node id = memory id, score =
    `node_score` (fused, or the one arm's own score).

    Retrieval bookkeeping (scores, contributions, explain...) and empty fields stay in the metadata
    but out of the text LlamaIndex renders for the LLM and the embedder. No hit while an arm failed
    raises `BackendUnavailable` (`fused_memory.adapters.answered`).
    """
    nodes = []
    for h in answered(retrieval).hits:
        metadata = hit_metadata(h, retrieval)
        hidden = list(dict.fromkeys((*LLM_HIDDEN_KEYS, *(k for k, v in metadata.items() if v in (None, [], {})))))
        # by field name through model_validate: the constructor's keyword for `metadata` is typed as
        # its alias, the deprecated `extra_info`
        node = MemoryNode.model_validate({"id_": h.memory.id, "text": h.memory.text, "metadata": metadata,
                                          "excluded_llm_metadata_keys": hidden,
                                          "excluded_embed_metadata_keys": hidden})
        nodes.append(NodeWithScore(node=node, score=node_score(h, arm)))
    return nodes


#: The most of one `custom_embedding_strs` text that is embedded: MiniLM reads at most 256 wordpieces,
#: about 1,000-1,500 characters of English, and its tokenizer drops the rest anyway.
EMBED_CHARS = 3000


class FusedMemoryRetriever(BaseRetriever):
    """Shared shell of the six retrievers: which arm (`arm`, None = fused ensemble), the store or
    ensemble, and the call options (`namespace`, `k`, `now`, `types`, `reranker`, `recency`,
    `collapse`, `min_score`), plain attributes a caller may change between calls. `types` is a hard pre-filter
    for dense and lexical, widened to all types when it leaves fewer than `FusionConfig.widen_below`
    results (the nodes' metadata then lists the arm under `widened_arms`).

    After fusion: `reranker` reorders the top `FusionConfig.rerank_depth` nodes: any LlamaIndex
    `BaseNodePostprocessor` (SentenceTransformerRerank, LLMRerank, CohereRerank...), a LangChain
    document compressor or a `fused_memory.rerank.Reranker`, under its own timeout (if it raises,
    hangs or answers garbage, the fused order stands and `failed_arms` names "rerank"); None: the
    ensemble's own, if any. `recency`: the recency list's weight (0: off; None: the ensemble's,
    set for "now" / "currently" / "still" questions). `collapse`: near-duplicates into one node, the newest (None: the
    ensemble's). `min_score`: a floor on the fused score (None: the ensemble's
    `FusionConfig.min_score`). As a node postprocessor after the retriever, a reranker would lose
    the fused explanation and fault isolation; given here it keeps both."""

    arm: ClassVar[str | None] = None

    def __init__(self, store: MemoryStore | EnsembleMemory | None = None, *, ensemble: EnsembleMemory | None = None,
                 namespace: str = "default", k: int = 10, now: datetime | str | None = None,
                 types: Sequence[MemoryType | str] | MemoryType | str | None = None, reranker: Any = None,
                 recency: float | None = None, collapse: bool | None = None, min_score: float | None = None,
                 callback_manager: CallbackManager | None = None, verbose: bool = False) -> None:
        super().__init__(callback_manager=callback_manager, verbose=verbose)
        self.store, self.ensemble = resolve_ensemble(store, ensemble, self.arm)
        defaults = CallOptions.of(namespace, k, now, types, reranker=reranker, recency=recency,
                                  collapse=collapse, min_score=min_score).checked(self.arm)
        self.namespace, self.k, self.now, self.types = defaults.namespace, defaults.k, defaults.now, defaults.types
        self.reranker, self.recency, self.collapse, self.min_score = reranker, recency, collapse, min_score

    def _options(self) -> CallOptions:
        return CallOptions.of(self.namespace, self.k, self.now, self.types, reranker=self.reranker,
                              recency=self.recency, collapse=self.collapse, min_score=self.min_score)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        ensemble = bound_ensemble(self.store, self.ensemble)  # `store` may have been reassigned
        return to_nodes(ensemble.retrieve(query_bundle.query_str, **self._kwargs(query_bundle, ensemble)), self.arm)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        ensemble = bound_ensemble(self.store, self.ensemble)
        return to_nodes(await ensemble.aretrieve(query_bundle.query_str, **self._kwargs(query_bundle, ensemble)),
                        self.arm)

    def _kwargs(self, query_bundle: QueryBundle, ensemble: EnsembleMemory) -> dict[str, Any]:
        """The core's options, plus what the vector arms embed when the bundle says: a query
        transform such as `HyDEQueryTransform` puts its hypothetical answer in
        `custom_embedding_strs`, which LlamaIndex's own vector retrievers embed instead of the query,
        one embedding per string, averaged; so do ours. (Joined into one text, a long answer would
        push the question past MiniLM's 256 tokens.) A ready `embedding` is not used: it
        comes from the caller's embedding model, and the memories were embedded with ours.
        Each string is stripped and cut to `EMBED_CHARS`, and strings are taken while they fit the
        query length limit together, as LlamaIndex's embedders truncate: a verbose HyDE answer failed
        the whole retrieval with a QueryError (the core holds a caller's `embed_text` to that limit)."""
        kw = self._options().core_kwargs(self.arm)
        left, strs = ensemble.config.max_query_chars, []
        cap = min(EMBED_CHARS, left)
        for text in (query_bundle.custom_embedding_strs or ()):
            piece = text.strip()[:cap].strip() if isinstance(text, str) else ""
            if piece and len(piece) <= left:
                strs.append(piece)
                left -= len(piece)
        if strs and strs != [query_bundle.query_str]:
            kw["embed_text"] = strs  # the core reads a list of one as that string
        return kw

    def __repr__(self) -> str:
        return f"{type(self).__name__}(namespace={self.namespace!r}, k={self.k})"


class DenseMemoryRetriever(FusedMemoryRetriever):
    """Semantic nearest neighbours (MiniLM cosine) over one namespace's memories."""

    arm: ClassVar[str | None] = ARM_RETRIEVERS["DenseMemoryRetriever"]


class BM25MemoryRetriever(FusedMemoryRetriever):
    """BM25 keyword search: exact identifiers, codes and rare names."""

    arm: ClassVar[str | None] = ARM_RETRIEVERS["BM25MemoryRetriever"]


class GraphMemoryRetriever(FusedMemoryRetriever):
    """Memories linked to the entities the query names, up to the planned number of hops."""

    arm: ClassVar[str | None] = ARM_RETRIEVERS["GraphMemoryRetriever"]


class TemporalMemoryRetriever(FusedMemoryRetriever):
    """Event memories inside the query's time window ("last week", "since we last talked")."""

    arm: ClassVar[str | None] = ARM_RETRIEVERS["TemporalMemoryRetriever"]


class TypeFilterMemoryRetriever(FusedMemoryRetriever):
    """Memories of the types the query implies (preference, event, entity, fact), or of `types`."""

    arm: ClassVar[str | None] = ARM_RETRIEVERS["TypeFilterMemoryRetriever"]


class EnsembleMemoryRetriever(FusedMemoryRetriever):
    """All five arms in parallel, fused by score-weighted RRF, each node explained in its metadata."""

    arm: ClassVar[str | None] = ARM_RETRIEVERS["EnsembleMemoryRetriever"]


def arm_retriever(arm: str, registry: ArmRegistry = BUILTIN_ARMS) -> type[FusedMemoryRetriever]:
    """The retriever class of one registered arm: the built-in class for the five
    (`arm_retriever("lexical") is BM25MemoryRetriever`), a new subclass for an arm a registry adds
    (`fused_memory.retrievers.registry`; give it an ensemble built with that registry)."""
    return arm_class(FusedMemoryRetriever, arm, registry)
