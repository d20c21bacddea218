"""Framework-neutral glue shared by the LangChain and the LlamaIndex adapters.

Both adapters do the same three things around the core: turn "a store or an ensemble" into an
`EnsembleMemory`, merge constructor defaults with per-call overrides into the core's keyword
arguments, and flatten a `FusedHit` (via the core's own `FusedHit.to_json()`) into JSON-safe
metadata. Doing that here, once, keeps the two adapters down to framework glue and guarantees they
describe a memory identically. It lives in the core because it imports neither framework: each
adapter works with the other framework absent.

No ranking, parsing or fusion happens here: every ordering comes from the core's `Retrieval`.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import lru_cache
from types import MappingProxyType
from typing import Any, TypeVar, cast

from .ensemble import EnsembleMemory, check_after, check_options
from .ensemble.source import EnsembleSource
from .errors import BackendUnavailable, ConfigurationError, MissingDependency, QueryError
from .results import Contribution, FailureKind, FusedHit, Retrieval
from .retrievers.registry import BUILTIN_ARMS, ArmRegistry
from .store.memory_store import MemoryStore
from .types import MemoryType, type_list

__all__ = [
    "ARM_RETRIEVERS",
    "arm_class",
    "DEFAULT_TOOL_NAME",
    "DEFAULT_TOOL_DESCRIPTION",
    "LLM_HIDDEN_KEYS",
    "RETRIEVAL_KEYS",
    "NO_MEMORIES",
    "ArmReport",
    "CallOptions",
    "EnsembleSource",
    "answered",
    "arm_reports",
    "memory_line",
    "hit_metadata",
    "missing_extra",
    "writable_store",
    "resolve_ensemble",
    "bound_ensemble",
]

#: Adapter class name -> the core arm it exposes (None: the fused ensemble), from the arm registry's
#: `class_name`s. One table, so both adapters agree on which class is which arm.
ARM_RETRIEVERS: Mapping[str, str | None] = MappingProxyType({
    **{spec.class_name: spec.name for spec in BUILTIN_ARMS if spec.class_name},
    "EnsembleMemoryRetriever": None,
})

_C = TypeVar("_C", bound=type)


@lru_cache(maxsize=256)
def arm_class(base: _C, arm: str, registry: ArmRegistry = BUILTIN_ARMS) -> _C:
    """A framework's retriever class for one registered arm: the built-in class of that name in
    `base`'s module, or a new subclass of `base` named by the arm's `class_name` (an arm the
    registry adds; one class per base, arm and registry). `ConfigurationError` for an arm the
    registry does not know."""
    spec = registry[arm]
    module = sys.modules[base.__module__]
    builtin: Any = getattr(module, spec.class_name, None) if spec.class_name else None
    if isinstance(builtin, type) and issubclass(builtin, base) and getattr(builtin, "arm", None) == arm:
        return cast(_C, builtin)
    name = spec.class_name or "".join(part.title() for part in arm.split("_")) + "MemoryRetriever"
    made: Any = type(base)(name, (base,), {"__annotations__": {"arm": "ClassVar[str | None]"}, "arm": arm,
                                           "__module__": base.__module__,
                                           "__doc__": f"The {arm!r} arm alone (`fused_memory.retrievers.registry`)."})
    return cast(_C, made)


#: Name and description both adapters give `memory_tool` unless the caller chooses others.
DEFAULT_TOOL_NAME = "search_memory"
DEFAULT_TOOL_DESCRIPTION = (
    "Search the user's long-term memory (facts, preferences, past and planned events, people and projects). "
    "Input: a natural-language question, e.g. 'what did I tell Sarah last week?' or 'what do I have "
    "next week?'."
)

#: What an agent tool says when nothing matched: some providers refuse empty content, and every
#: model reads it ambiguously.
NO_MEMORIES = "No memories matched this query."
_BLANK_LINES = re.compile(r"\n(?:[ \t\r\f\v]*\n)+")


def memory_line(kind: object, event_at: object, text: str, memory_id: object = None) -> str:
    """One memory as an agent tool shows it to the model, in both frameworks: `[type, event time]
    text`, the time whenever the memory has one ("when did I...?" is half of what agents ask a
    memory; a fact typed by the caller with its own `event_at`, "my passport expires", showed none),
    and `id=...` when given (a model that may delete memories must see which one it means).
    Blank lines inside a memory are closed up, since a blank line separates one memory from the next."""
    tags = [str(kind or "memory"), *([str(event_at)] if event_at else []),
            *([f"id={memory_id}"] if memory_id is not None else [])]
    return f"[{', '.join(tags)}] {_BLANK_LINES.sub(chr(10), text)}"


def missing_extra(error: ModuleNotFoundError, extras: Mapping[str, str]) -> Exception:
    """What an adapter raises when its framework is not installed: `MissingDependency` naming the
    extra that installs it (`pip install "fused-memory[llama-index]"`), for a missing top-level
    package `extras` maps (or a dotted one, "llama_index.core"); any other missing module as it was."""
    name = error.name or ""
    for package, extra in extras.items():
        if name == package or name.startswith(package + "."):
            shown = package.replace(".", "-").replace("_", "-")
            return MissingDependency(f'{shown} is not installed: pip install "fused-memory[{extra}]"')
    return error


def writable_store(store: object, what: str) -> MemoryStore:
    """`store` where an adapter writes memories (the LangGraph store, the write tools, the LlamaIndex
    memory block): a `MemoryStore`. The read adapters take an ensemble over any `EnsembleSource`, but
    writing needs `add`, `delete` and the listing only the store has."""
    if not isinstance(store, MemoryStore):
        raise ConfigurationError(f"{what} writes memories, so it needs a fused_memory MemoryStore (or an ensemble "
                                 f"over one), got {type(store).__module__}.{type(store).__name__}")
    return store


def answered(retrieval: Retrieval) -> Retrieval:
    """The retrieval an adapter may hand over: no hits while some arm failed is not "no memories"
    (the answer may be in the part that failed), and a framework's empty list cannot say so, so it
    raises, as a query whose every arm failed does. With hits, the failures ride in the metadata."""
    # not the entity lookup of a query whose graph arm was not asked for (a BM25 retriever's), nor a
    # shortcut plan's failure the full plan answered after
    planned = [f for f in retrieval.failures if f.arm in retrieval.plan.arms and f.kind != "shortcut"]
    if not retrieval.hits and planned:
        causes = {f.arm: f"{f.kind}: {f.reason}" for f in planned}
        raise BackendUnavailable("no memory matched, and the search was incomplete (the answer may be in "
                                 "what failed): " + "; ".join(f"{a}: {r}" for a, r in causes.items()), causes)
    return retrieval


#: Metadata keys that belong to one retrieval, not to the memory: they change from query to query
#: and from arm to arm. A node's content hash leaves them out (see the LlamaIndex `MemoryNode`).
RETRIEVAL_KEYS: tuple[str, ...] = (
    "score", "rank", "arms", "contributions", "explain", "skipped_arms", "failed_arms", "widened_arms",
    "pooled_arms", "collapsed", "supersedes", "superseded_by", "rerank_score", "rank_before_rerank", "reranked_by",
)

#: Metadata keys that describe *how* a memory was found, or are bookkeeping. They stay on the
#: Document / node for programs and traces but are kept out of the text an LLM or an embedder sees
#: (LlamaIndex renders node metadata into prompts by default; a prompt full of RRF arithmetic helps
#: no one).
LLM_HIDDEN_KEYS: tuple[str, ...] = ("memory_id", "namespace", "created_at", "session_id", "metadata",
                                    "context", *RETRIEVAL_KEYS)  # context: the turns before, not the memory


def bound_ensemble(store: EnsembleSource | EnsembleMemory | None, ensemble: EnsembleMemory | None) -> EnsembleMemory:
    """The ensemble an adapter runs, checked against its store on every call: pydantic's
    `model_copy(update={"store": ...})` and attribute assignment skip validation, and answering from
    the old store under the new one's name would be another tenant's memories (or entities). A
    default the adapter derived gives way to the new store, as at construction (`resolve_ensemble`);
    a caller's own ensemble over another store is refused."""
    if ensemble is not None and store is not ensemble.store and type(ensemble) is _DefaultEnsemble \
            and isinstance(store, MemoryStore):
        return _switched_default(store, ensemble.optimizer)
    if ensemble is None or store is not ensemble.store:
        raise ConfigurationError(
            "this retriever's store and ensemble disagree (model_copy(update=...) and assignment skip "
            "validation); build a new one with the store, or update store and ensemble together")
    return ensemble


class _DefaultEnsemble(EnsembleMemory):
    """The ensemble an adapter builds for a store given alone. Its type records that it was derived,
    not chosen: LangChain's `configurable_fields(store=...)` rebuilds a retriever from its fields
    with only the store replaced, so the old default arrives beside the new store, and the store is
    what the caller chose. A copy keeps the type (`EnsembleMemory.__copy__`), so copied retrievers
    can switch stores too. Anything else about it is `EnsembleMemory`'s."""


_SWITCHED_LOCK = threading.Lock()


def _switched_default(store: MemoryStore, optimizer: bool) -> _DefaultEnsemble:
    """One derived default per (store, optimizer) for retrievers switched to that store:
    `configurable_fields` rebuilds the retriever on every call, and a new ensemble each time would
    start a new thread pool per call and forget which arms are still hung past their timeout. Kept
    on the store itself (not in a module-level map, whose values would keep every store alive)."""
    with _SWITCHED_LOCK:
        by_mode: dict[bool, _DefaultEnsemble] = vars(store).setdefault("_adapter_switched_defaults", {})
        if optimizer not in by_mode:
            by_mode[optimizer] = _DefaultEnsemble(store, optimizer=optimizer)
        return by_mode[optimizer]


def resolve_ensemble(store: EnsembleSource | EnsembleMemory | None, ensemble: EnsembleMemory | None,
                     arm: str | None = None) -> tuple[EnsembleSource, EnsembleMemory]:
    """Accept a store, an ensemble, or both (then they must agree) and return both.

    A store alone gets a default `EnsembleMemory` (construction does no I/O): with the optimizer for
    the fused retriever; without it (`optimizer=False`, "every arm that can run") for a single-arm
    retriever, because the optimizer's skip rules and type pre-filter exist to make the *fusion*
    better: a caller who asked for BM25 alone wants BM25 for "what did I do yesterday?", not an empty
    list because the fused plan would have left BM25 out. The arm still gets everything the parser
    found (time window, entities, type hints). Passing an ensemble is how a caller chooses otherwise,
    or brings a tuned `FusionConfig` or custom arms. A store that disagrees with an ensemble this
    function built for another store replaces it (see `_DefaultEnsemble`); one that disagrees with a
    caller's ensemble is refused, since which of the two the caller meant cannot be known.
    """
    if isinstance(store, EnsembleMemory):  # "the store" may be given as an ensemble
        store, ensemble = (None, store) if ensemble is None else (store, ensemble)
        if isinstance(store, EnsembleMemory):
            raise TypeError("pass the ensemble as `ensemble=` and its store as `store=`, not two ensembles")
    if ensemble is not None and not isinstance(ensemble, EnsembleMemory):
        raise TypeError(f"ensemble must be a fused_memory EnsembleMemory, got {type(ensemble).__name__}")
    if store is not None and not isinstance(store, MemoryStore):
        raise TypeError(f"store must be a fused_memory MemoryStore or EnsembleMemory, got {type(store).__name__}")
    if ensemble is None:
        if store is None:
            raise TypeError("give a MemoryStore (store=...) or an EnsembleMemory (ensemble=...)")
        ensemble = _DefaultEnsemble(store, optimizer=arm is None)
        _check_arm(ensemble, arm)
        return store, ensemble
    _check_arm(ensemble, arm)
    if store is not None and store is not ensemble.store:
        if type(ensemble) is _DefaultEnsemble:  # derived from the old store: the new one is the choice
            return store, _switched_default(store, ensemble.optimizer)
        raise ValueError("store and ensemble disagree: the ensemble runs over a different store (to "
                         "switch stores, give the new store alone or with an ensemble built over it)")
    return ensemble.store, ensemble


def _check_arm(ensemble: EnsembleMemory, arm: str | None) -> None:
    """A one-arm retriever's arm is one the ensemble knows: refused when the retriever is built, not
    on its first query."""
    if arm is not None and arm not in ensemble.arm_names:
        raise ConfigurationError(f"this ensemble has no arm {arm!r}; its arms are {', '.join(ensemble.arm_names)} "
                                 "(an arm of your registry needs an ensemble built with it: ensemble=...)")


def _parse_now(value: datetime | str | None) -> datetime | None:
    """Agents and configs pass times as ISO strings; the core wants datetimes (and itself refuses
    naive ones, so no zone is guessed here)."""
    if value is None or isinstance(value, datetime):
        return value
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            raise QueryError(f"now must be an ISO-8601 time, got {value!r}") from None
    raise QueryError(f"now must be a datetime or an ISO-8601 string, got {type(value).__name__}")


@dataclass(frozen=True)
class CallOptions:
    """The per-call parameters both adapters accept, resolved against the retriever's defaults.

    `None` in an override means "use the default"; the values are checked by the core's own
    `check_options` and `check_after` (at construction through `checked`, and by every retrieve).
    `reranker`, `recency` and `collapse` are the stage after fusion's (`EnsembleMemory.retrieve`):
    a reranker (a LangChain document compressor, a LlamaIndex node postprocessor or a
    `fused_memory.rerank.Reranker`), the recency list's weight, near-duplicate collapse, and the
    floor on the fused score (`min_score`).
    """

    namespace: str
    k: int
    now: datetime | None = None
    types: tuple[MemoryType | str, ...] | None = None
    reranker: Any = None
    recency: float | None = None
    collapse: bool | None = None
    min_score: float | None = None

    @classmethod
    def of(cls, namespace: str, k: int, now: datetime | str | None = None,
           types: Sequence[MemoryType | str] | MemoryType | str | None = None, *, reranker: Any = None,
           recency: float | None = None, collapse: bool | None = None,
           min_score: float | None = None) -> CallOptions:
        return cls(namespace, k, _parse_now(now), type_list(types), reranker, recency, collapse, min_score)

    def checked(self, arm: str | None = None) -> CallOptions:
        """These options, after the checks the core makes on every call (`check_options`,
        `check_after`) for a retriever of `arm` (None: the ensemble): its defaults are checked where
        they are written, not on its first query."""
        check_options(self.namespace, self.k, self.now, self.types, [arm] if arm else None)
        check_after(self.reranker, self.recency, self.collapse, self.min_score)
        return self

    def override(self, *, namespace: str | None = None, k: int | None = None,
                 now: datetime | str | None = None,
                 types: Sequence[MemoryType | str] | MemoryType | str | None = None, reranker: Any = None,
                 recency: float | None = None, collapse: bool | None = None,
                 min_score: float | None = None) -> CallOptions:
        """These options with every non-None override applied."""
        changes: dict[str, Any] = {}
        if namespace is not None:
            changes["namespace"] = namespace
        if k is not None:
            changes["k"] = k
        if now is not None:
            changes["now"] = _parse_now(now)
        if types is not None:
            changes["types"] = type_list(types)
        for name, value in (("reranker", reranker), ("recency", recency), ("collapse", collapse),
                            ("min_score", min_score)):
            if value is not None:
                changes[name] = value
        return replace(self, **changes) if changes else self

    def core_kwargs(self, arm: str | None) -> dict[str, Any]:
        """Keyword arguments for `EnsembleMemory.retrieve` / `aretrieve`; a single-arm retriever
        is the ensemble restricted to that arm (for one arm, fused order is the arm's order, unless
        the retriever asks for recency, collapse or a reranker itself)."""
        kw: dict[str, Any] = {"namespace": self.namespace, "k": self.k, "now": self.now, "types": self.types,
                              "reranker": self.reranker, "recency": self.recency, "collapse": self.collapse,
                              "min_score": self.min_score}
        if arm is not None:
            kw["arms"] = [arm]
        return kw


def _retrieval_info(retrieval: Retrieval) -> dict[str, Any]:
    """What one retrieval says about arms that did not answer, and which reranker ordered it: the
    same on every hit. A failed reranker is under `failed_arms` as "rerank"."""
    return {
        "skipped_arms": dict(retrieval.plan.skipped),
        "failed_arms": {f.arm: f"{f.kind}: {f.reason}" for f in retrieval.failures},
        "widened_arms": list(retrieval.widened),
        "pooled_arms": list(retrieval.pooled),
        "reranked_by": retrieval.reranked_by,
    }


def hit_metadata(hit: FusedHit, retrieval: Retrieval) -> dict[str, Any]:
    """JSON-safe metadata for one fused hit, built from `FusedHit.to_json()`.

    The memory's fields come first (type, ISO `event_at` with the offset it was given, so a June 1
    move written at +02:00 is not shown as May 31; a time given in UTC in the zone of the query's
    `now`: the agent tool showed a Friday-evening dinner asked about from Los Angeles as Saturday in
    UTC; entities...), the caller's own memory
    metadata under `metadata`, then the retrieval facts: score, rank, arms, per-arm contributions
    (the recency list's too, as "recency"), the explain string, what the stage after fusion did
    (collapsed ids, supersedes / superseded_by, rerank_score and rank_before_rerank) and the skipped /
    failed / widened arms. The caller's own keys are also
    copied to the top level, where LangChain document prompts ("{source}") and LlamaIndex
    postprocessors look for them; where one is named like a key above, ours keeps the name and the
    caller's value stays under `metadata`.
    """
    data = hit.to_json()
    memory = dict(data["memory"])
    memory_id = memory.pop("id")
    memory.pop("text")
    for key in ("event_at", "created_at"):  # with the offset it was given; a UTC time (what code
        if memory.get(key):                 # writes when it knows no zone) in the query's zone
            when = datetime.fromisoformat(memory[key])
            zone = retrieval.parsed.now.tzinfo if retrieval.parsed is not None else None
            memory[key] = (when.astimezone(zone) if zone is not None and not when.utcoffset() else when).isoformat()
    out = {
        "memory_id": memory_id,
        **memory,
        "score": data["score"],
        "rank": data["rank"],
        "arms": [c["arm"] for c in data["contributions"] if c["arm"] != "recency"],  # a list, not a retriever
        "contributions": data["contributions"],
        "explain": data["explain"],
        **{key: data[key] for key in ("collapsed", "supersedes", "superseded_by", "rerank_score",
                                      "rank_before_rerank")},
        **_retrieval_info(retrieval),
    }
    for key, value in (memory.get("metadata") or {}).items():
        out.setdefault(key, value)
    return out


@dataclass(frozen=True)
class ArmReport:
    """One planned arm as a trace wants to show it: the fused hits it contributed to, in the arm's
    own rank order, how long it took, and why it failed if it did. `partial`: it answered, but
    the memories of some of its hits could not be read (a "hydration" failure), so `hits` is what
    of its answer survived rather than nothing; or it failed in a plan that needed no embedding
    and answered in the full plan that ran next (a "shortcut" failure)."""

    arm: str
    hits: tuple[tuple[FusedHit, Contribution], ...]
    elapsed_ms: float | None
    error: str | None = None
    widened: bool = False
    partial: bool = False


def arm_reports(retrieval: Retrieval) -> list[ArmReport]:
    """A report per planned arm, in plan order.

    The core keeps each arm's share of every *returned* hit (`FusedHit.contributions`), not the
    arm's full candidate list, so a report lists the returned hits that arm found, ordered by the
    rank the arm itself gave them.
    """
    failed = {f.arm: f"{f.kind}: {f.reason}" for f in retrieval.failures}  # the final round's last
    hard = {f.arm for f in retrieval.failures if f.kind in (FailureKind.ERROR, FailureKind.TIMEOUT)}
    partial = {f.arm for f in retrieval.failures if f.kind in (FailureKind.HYDRATION, FailureKind.SHORTCUT)} - hard
    out: list[ArmReport] = []
    for arm in retrieval.plan.arms:
        found = [(h, c) for h in retrieval.hits for c in h.contributions if c.arm == arm]
        found.sort(key=lambda hc: hc[1].rank)
        out.append(ArmReport(arm, tuple(found), retrieval.timings_ms.get(arm), failed.get(arm),
                             arm in retrieval.widened, arm in partial))
    return out
