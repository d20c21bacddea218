"""`QueryOptimizerChain`: the core's query optimizer (Stage 1 parse + Stage 2 plan) as a Runnable.

`str -> QueryPlan`. It is the very function `EnsembleMemory` runs before fanning out
(`EnsembleMemory.plan`), exposed so a LangChain user can inspect a plan, trace it as its own chain
run, or compose a chain around it (route on `plan.type_hints`, log `plan.reasons`...). Entity
resolution needs a namespace's known entities and "since we last talked" its last session, so the
store (or ensemble) and the namespace are fixed at construction.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any

from langchain_core.runnables import RunnableConfig, RunnableSerializable
from langchain_core.runnables.config import run_in_executor
from pydantic import BeforeValidator, ConfigDict, Field, model_validator

from fused_memory import EnsembleMemory, MemoryStore, MemoryType, QueryPlan
from fused_memory.adapters import CallOptions, EnsembleSource, bound_ensemble, resolve_ensemble

__all__ = ["QueryOptimizerChain", "TypesField"]


def _one_type(value: Any) -> Any:
    """A single type is a common shorthand, as it is per call and in LlamaIndex."""
    return [value] if isinstance(value, (str, MemoryType)) else value


#: The `types` field of the retrievers and of this chain: a list of types, or one given bare.
TypesField = Annotated[list[MemoryType | str] | None, BeforeValidator(_one_type)]


class QueryOptimizerChain(RunnableSerializable[str, QueryPlan]):
    """Runnable `str -> QueryPlan` over one namespace of one store."""

    store: MemoryStore | EnsembleMemory | EnsembleSource | None = None
    """The memory store whose entities and sessions the parser resolves against (or an ensemble);
    after construction, the store the ensemble reads."""
    ensemble: EnsembleMemory | None = None
    """The ensemble whose optimizer settings (e.g. `optimizer=False`) to use; built from `store` if absent."""
    namespace: str = "default"
    now: datetime | None = None
    """The moment queries are asked at (tz-aware); None = the core's clock."""
    types: TypesField = Field(default=None)
    """Memory types the caller forces, as the retrievers take them: the plan then shows them as its
    hard type filter (a plan shown without them was not the plan the retriever ran)."""

    # a misspelled field (namesapce=...) must fail, not plan against "default" (as the retrievers)
    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    @model_validator(mode="after")
    def _bind(self) -> QueryOptimizerChain:
        CallOptions.of(self.namespace, 1, self.now, self.types).checked()
        self.store, self.ensemble = resolve_ensemble(self.store, self.ensemble)
        return self

    def _planner(self, kwargs: dict[str, Any]) -> Callable[[str, Any, RunnableConfig], QueryPlan]:
        """The plan function for one call: per-call `namespace` / `now` first, then the fields, as
        the retrievers take them. Any other keyword is a mistake (a misspelled `namesapce=` planned
        against the default namespace) and is refused. A bare `config["configurable"]["namespace"]`
        is not read, as the retrievers do not read it: that dict is shared by every component of a
        run (a plan for "bob" beside documents of "default" was the result); make the fields
        configurable instead (`configurable_fields(namespace=ConfigurableField(id=...))`)."""
        unknown = sorted(set(kwargs) - {"namespace", "now", "types"})
        if unknown:
            raise TypeError(f"QueryOptimizerChain got unexpected keyword argument(s) {unknown}; "
                            "per-call options are namespace, now and types")

        def plan(query: str, run_manager: Any, config: RunnableConfig) -> QueryPlan:
            ensemble = bound_ensemble(self.store, self.ensemble)
            opts = CallOptions.of(self.namespace, 1, self.now, self.types).override(
                namespace=kwargs.get("namespace"), now=kwargs.get("now"), types=kwargs.get("types"))
            return ensemble.plan(query, namespace=opts.namespace, now=opts.now, types=opts.types)[1]
        return plan

    def invoke(self, input: str, config: RunnableConfig | None = None, **kwargs: Any) -> QueryPlan:
        """Plan `input`; `namespace=` / `now=` / `types=` override the fields for this call."""
        return self._call_with_config(self._planner(kwargs), input, config, run_type="chain")

    async def ainvoke(self, input: str, config: RunnableConfig | None = None, **kwargs: Any) -> QueryPlan:
        """Parsing is CPU work with no async core path: it runs in the executor, off the event loop."""
        planner = self._planner(kwargs)

        async def plan(query: str, run_manager: Any, config: RunnableConfig) -> QueryPlan:
            return await run_in_executor(config, planner, query, None, config)
        return await self._acall_with_config(plan, input, config, run_type="chain")
