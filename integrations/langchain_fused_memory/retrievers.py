"""The six fused-memory retrievers as native LangChain `BaseRetriever`s.

Each class is a thin shell over the core: the ensemble class calls `EnsembleMemory.retrieve` /
`aretrieve`; a single-arm class calls the same method restricted to its arm (`arms=[arm]`, on an
ensemble built with `optimizer=False` unless the caller brings one: see
`fused_memory.adapters.resolve_ensemble`), so it gets the core's parsing, per-arm request
building and explanations without any of that living here. For one arm the fused order is exactly
the arm's order.

Tracing: every call is one retriever run (LangChain's own), carrying `ls_retriever_name`. Under it
the adapter reports what the core did as child runs: a `QueryOptimizerChain` chain run whose output
is the plan (arms, type hints, reasons, skipped arms), then one retriever run per planned arm
(`fused_memory:<arm>`) whose output is the returned documents that arm found, in the arm's own rank
order, with its elapsed time in the run metadata; a failed or timed-out arm is a run that ends in
error. The core runs its arms in worker threads and returns one `Retrieval`, so these child runs are
emitted when it returns: their nesting, inputs, outputs and errors are exact, their wall-clock
start/end are not (the measured time is in metadata `elapsed_ms`).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from datetime import datetime
from typing import Any, ClassVar

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever, LangSmithRetrieverParams
from pydantic import ConfigDict, Field, field_validator, model_validator

from fused_memory import BUILTIN_ARMS, ArmRegistry, EnsembleMemory, MemoryStore, MemoryType, Retrieval
from fused_memory.adapters import (
    ARM_RETRIEVERS,
    ArmReport,
    CallOptions,
    EnsembleSource,
    answered,
    arm_class,
    arm_reports,
    bound_ensemble,
    hit_metadata,
    resolve_ensemble,
)

from .optimizer import QueryOptimizerChain, TypesField

__all__ = [
    "FusedMemoryRetriever",
    "DenseMemoryRetriever",
    "BM25MemoryRetriever",
    "GraphMemoryRetriever",
    "TemporalMemoryRetriever",
    "TypeFilterMemoryRetriever",
    "EnsembleMemoryRetriever",
    "to_documents",
    "arm_retriever",
]

#: kwargs LangChain itself may leave in `invoke(**kwargs)`; accepted and ignored.
_RUNNABLE_KWARGS = frozenset({"verbose"})
#: Per-call options of the stage after fusion (`CallOptions`), beside k, namespace, now and types.
_AFTER_KWARGS = ("reranker", "recency", "collapse", "min_score")


def to_documents(retrieval: Retrieval) -> list[Document]:
    """One `Document` per fused hit, in the core's order: `id` = memory id, `page_content` = text.
    No hit while an arm failed raises `BackendUnavailable` (`fused_memory.adapters.answered`)."""
    return [Document(id=h.memory.id, page_content=h.memory.text, metadata=hit_metadata(h, retrieval))
            for h in answered(retrieval).hits]


def _arm_documents(report: ArmReport) -> list[Document]:
    """The documents one arm found, in its own rank order, with its own rank and raw score."""
    return [Document(id=h.memory.id, page_content=h.memory.text,
                     metadata={"memory_id": h.memory.id, "arm_rank": c.rank, "arm_score": c.raw_score,
                               "fused_rank": h.rank, "detail": c.detail})
            for h, c in report.hits]


def _arm_metadata(report: ArmReport) -> dict[str, Any]:
    return {"ls_retriever_name": f"fused_memory_{report.arm}", "fused_memory_arm": report.arm,
            "elapsed_ms": report.elapsed_ms, "widened": report.widened,
            **({"partial_failure": report.error} if report.partial else {})}


def _plan_output(retrieval: Retrieval) -> dict[str, Any]:
    plan = retrieval.to_json()["plan"]
    if retrieval.parsed is not None and retrieval.parsed.temporal_window is not None:
        plan["temporal_window"] = str(retrieval.parsed.temporal_window)
    return plan


class _ArmFailed(RuntimeError):
    """Stands in for an arm's exception (the core records the reason, not the exception object)."""


class FusedMemoryRetriever(BaseRetriever):
    """Shared shell of the six retrievers: which arm (`arm`, None = fused ensemble), the store or
    ensemble, and defaults that every call may override (`k`, `namespace`, `now`, `types`, and after
    fusion `reranker`, `recency`, `collapse`, `min_score`)."""

    arm: ClassVar[str | None] = None

    store: MemoryStore | EnsembleMemory | EnsembleSource | None = None
    """The memory store (an `EnsembleMemory` is accepted here too). Give this, `ensemble`, or both
    (they must match); after construction it is the store the ensemble reads (a `MemoryStore`, or
    the `EnsembleSource` an ensemble given alone was built over)."""
    ensemble: EnsembleMemory | None = None
    """The core ensemble to run (bring one for a tuned FusionConfig). Built from `store` if absent:
    optimizer on for the ensemble class, off for the single-arm classes (each arm runs whenever it can)."""
    namespace: str = "default"
    """Tenant whose memories are searched."""
    k: int = 10
    """Number of documents returned."""
    now: datetime | None = None
    """The moment queries are asked at (tz-aware; resolves "last week"); None = the core's clock."""
    types: TypesField = Field(default=None)
    """Types to filter on (e.g. ["preference"] or "preference"): a hard pre-filter for dense and
    lexical, widened to all types when it leaves fewer than `FusionConfig.widen_below` results (the
    documents' metadata then lists the arm under `widened_arms`); None lets the optimizer decide."""
    reranker: Any = None
    """Reorders the top `FusionConfig.rerank_depth` documents: any LangChain `BaseDocumentCompressor`
    (CohereRerank, CrossEncoderReranker, FlashrankRerank, LLMListwiseRerank...), a LlamaIndex node
    postprocessor or a `fused_memory.rerank.Reranker`. It runs under its own timeout; if it raises,
    hangs or answers garbage the fused order stands and `failed_arms` names "rerank". None: the
    ensemble's own reranker, if it has one."""
    recency: float | None = None
    """Weight of the recency list fused after the arms (0 turns it off); None: the ensemble's
    (`FusionConfig.current_state_recency` on "now" / "currently" / "still" questions, else
    `recency_weight`, 0 by default; none on questions about the past)."""
    collapse: bool | None = None
    """Near-duplicates collapse into one document, the newest (metadata `collapsed` lists the others);
    None: the ensemble's `FusionConfig.collapse`."""
    min_score: float | None = None
    """A floor on the fused score (`score` in the metadata); None: the ensemble's
    `FusionConfig.min_score`. A memory no arm scored above 0 is never returned."""

    # a misspelled field (namesapce=...) must fail, not search the "default" namespace
    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    @field_validator("k", mode="before")
    @classmethod
    def _whole_k(cls, value: Any) -> Any:
        """k as the core takes it (an integer, numpy's too): "5" or 2.0 is refused, not converted."""
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            return int(value)
        raise ValueError(f"k must be a positive integer, got {value!r}")

    @model_validator(mode="after")
    def _bind(self) -> FusedMemoryRetriever:
        self._defaults().checked(self.arm)  # k=0, "opinion", naive now, a reranker that is none
        store, ensemble = resolve_ensemble(self.store, self.ensemble, self.arm)
        self.store, self.ensemble = store, ensemble
        return self

    @property
    def _ensemble(self) -> EnsembleMemory:
        return bound_ensemble(self.store, self.ensemble)

    def _get_ls_params(self, **kwargs: Any) -> LangSmithRetrieverParams:
        """Every run carries `ls_retriever_name` (fused_memory_<arm> or fused_memory_ensemble)."""
        params = super()._get_ls_params(**kwargs)
        params["ls_retriever_name"] = f"fused_memory_{self.arm or 'ensemble'}"
        return params

    def _defaults(self) -> CallOptions:
        return CallOptions.of(self.namespace, self.k, self.now, self.types, reranker=self.reranker,
                              recency=self.recency, collapse=self.collapse, min_score=self.min_score)

    def _options(self, k: int | None, namespace: str | None, now: datetime | str | None,
                 types: Sequence[MemoryType | str] | MemoryType | str | None,
                 extra: dict[str, Any]) -> CallOptions:
        after = {name: extra.pop(name) for name in _AFTER_KWARGS if name in extra}
        unknown = set(extra) - _RUNNABLE_KWARGS
        if unknown:
            raise TypeError(f"{type(self).__name__} got unexpected keyword argument(s) {sorted(unknown)}; "
                            "per-call overrides are k, namespace, now, types, reranker, recency, collapse, min_score")
        return self._defaults().override(k=k, namespace=namespace, now=now, types=types, **after)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
                                k: int | None = None, namespace: str | None = None,
                                now: datetime | str | None = None,
                                types: Sequence[MemoryType | str] | MemoryType | str | None = None,
                                **kwargs: Any) -> list[Document]:
        opts = self._options(k, namespace, now, types, kwargs)
        retrieval = self._ensemble.retrieve(query, **opts.core_kwargs(self.arm))
        self._trace(query, retrieval, run_manager)
        return to_documents(retrieval)

    async def _aget_relevant_documents(self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun,
                                       k: int | None = None, namespace: str | None = None,
                                       now: datetime | str | None = None,
                                       types: Sequence[MemoryType | str] | MemoryType | str | None = None,
                                       **kwargs: Any) -> list[Document]:
        opts = self._options(k, namespace, now, types, kwargs)
        retrieval = await self._ensemble.aretrieve(query, **opts.core_kwargs(self.arm))
        await self._atrace(query, retrieval, run_manager)
        return to_documents(retrieval)

    # ------------------------------------------------------------------ child runs
    @staticmethod
    def _trace(query: str, retrieval: Retrieval, run_manager: CallbackManagerForRetrieverRun) -> None:
        if not run_manager.handlers:
            return
        chain = run_manager.get_child().on_chain_start(None, {"query": query}, name="QueryOptimizerChain")
        chain.on_chain_end(_plan_output(retrieval))
        for report in arm_reports(retrieval):
            child = run_manager.get_child(f"fused_memory:{report.arm}")
            child.add_metadata(_arm_metadata(report), inherit=False)
            run = child.on_retriever_start(None, query, name=f"fused_memory:{report.arm}")
            if report.error is not None and not report.partial:  # a partial answer ends with what it kept
                run.on_retriever_error(_ArmFailed(report.error))
            else:
                run.on_retriever_end(_arm_documents(report))

    @staticmethod
    async def _atrace(query: str, retrieval: Retrieval, run_manager: AsyncCallbackManagerForRetrieverRun) -> None:
        if not run_manager.handlers:
            return
        chain = await run_manager.get_child().on_chain_start(None, {"query": query}, name="QueryOptimizerChain")
        await chain.on_chain_end(_plan_output(retrieval))
        for report in arm_reports(retrieval):
            child = run_manager.get_child(f"fused_memory:{report.arm}")
            child.add_metadata(_arm_metadata(report), inherit=False)
            run = await child.on_retriever_start(None, query, name=f"fused_memory:{report.arm}")
            if report.error is not None and not report.partial:  # a partial answer ends with what it kept
                await run.on_retriever_error(_ArmFailed(report.error))
            else:
                await run.on_retriever_end(_arm_documents(report))


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
    """All five arms in parallel, fused by score-weighted RRF, each document explained."""

    arm: ClassVar[str | None] = ARM_RETRIEVERS["EnsembleMemoryRetriever"]

    @property
    def optimizer(self) -> QueryOptimizerChain:
        """The query optimizer this retriever's ensemble runs, as a `QueryOptimizerChain` Runnable
        bound to the same ensemble, namespace, clock and forced types."""
        return QueryOptimizerChain(ensemble=self._ensemble, namespace=self.namespace, now=self.now,
                                   types=self.types)


def arm_retriever(arm: str, registry: ArmRegistry = BUILTIN_ARMS) -> type[FusedMemoryRetriever]:
    """The retriever class of one registered arm: the built-in class for the five
    (`arm_retriever("lexical") is BM25MemoryRetriever`), a new subclass for an arm a registry adds
    (`fused_memory.retrievers.registry`; give it an ensemble built with that registry)."""
    return arm_class(FusedMemoryRetriever, arm, registry)
