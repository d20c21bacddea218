"""`EnsembleMemory`: parse -> optimize -> fan-out -> widen -> fuse -> hydrate -> after fusion -> rerank.

Sync and async share every step but the waiting: `_prepare` builds the plan and a list of tasks,
`_finish` fuses whatever came back and runs the stage after fusion (`after_fusion`), `_done` applies
the reranker's answer; `retrieve` waits on threads, `aretrieve` awaits the same callables on the
event loop (the reranker's call too: it is a task like an arm's). The Qdrant-backed arms of one
query go to the engine as one batch (one task); BM25 and the graph run beside it. A task that raises
or outlives its timeout is dropped and recorded; the others still answer.
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import logging
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from ..backends.graph import hub_damping
from ..config import FusionConfig
from ..errors import BackendUnavailable, ConfigurationError, QueryError, StoreClosed
from ..handles import refuse_pickle
from ..query.entities import EntityMatcher
from ..query.optimizer import DEFAULT_RULES, optimize, optimize_off, with_arm_rules
from ..query.parse import check_embed_text, parse_query
from ..query.shortcuts import IDENTIFIER
from ..query.store_rules import filter_share, with_store
from ..ranking import Learned, Ranker
from ..rerank import Reranker, as_reranker
from ..results import Arm, ArmFailure, Hit, ParsedQuery, QueryPlan, Retrieval
from ..retrievers.base import ArmRequest, Retriever
from ..retrievers.registry import BUILTIN_ARMS, ArmRegistry
from ..retrievers.vector import ScopedGraphRetriever, VectorArm, run_vector_arms
from ..types import Memory, MemoryType
from ..validation import require_aware, utcnow
from .after_fusion import Staged, after_fusion, staged
from .caller_plan import with_caller
from .fanout import Job, Outcome, Task, checked, failed, raiser
from .fusion import fuse
from .hung_arms import FailureLog, HungArms
from .learned import ordered_fusion, resolve_ranker, with_learned
from .lookup import EntityLookup
from .misses import MissExplanation, Trace
from .misses import explain as explain_miss
from .options import check_after, check_options, check_rules_off
from .plans import fallback_plan, missed, shortcut_arm, shortcut_request, soft_window_plan, with_memories
from .reranking import RERANK
from .slack import Slack, read_ahead
from .source import EnsembleSource, ReadyToEmbed
from .waiting import await_all, wait_all
from .widening import WIDENABLE, needs_widening, widened

__all__ = ["EnsembleMemory", "check_options"]

_log = logging.getLogger("fused_memory.ensemble")  # the name the README tells users to configure
#: How the task that runs the vector arms together is labelled ("vector:dense+type").
VECTOR_TASK = "vector:"

class EnsembleMemory:
    """The five arms over one `MemoryStore` (any `EnsembleSource`), fused by score-weighted RRF.

    `optimizer=False` runs every arm that can run (the baseline the optimizer is measured against);
    `rules_off` names optimizer rules to leave out (`query.RULE_NAMES`, `STORE_RULE_NAMES`), to measure
    what each is worth. `arms` replaces or adds arms by name (any object with the `Retriever`
    protocol). `reranker` reorders the top of every retrieval (a `fused_memory.rerank.Reranker`, a
    LangChain document compressor or a LlamaIndex node postprocessor; a call may bring its own).
    `ranker` (a ranker file's path or a `ranking.Ranker`) orders the fused candidates (the learned
    order) unless `FusionConfig(order="rrf")`; None: `config.ranker`, else the shipped ranker.
    `registry` are the arms it knows (`retrievers.registry`:
    the five built-ins unless given; an arm added there is built, planned by its own rules, weighed
    and explained like the five).
    Construction does no I/O but reading that file. A copy is a new ensemble over the same store (`handles`).
    """

    def __init__(self, store: EnsembleSource, config: FusionConfig | None = None, *, optimizer: bool = True,
                 arms: Mapping[str, Retriever] | None = None, max_workers: int = 8,
                 clock: Callable[[], datetime] = utcnow, reranker: object = None,
                 rules_off: Collection[str] = (), ranker: object = None,
                 registry: ArmRegistry | None = None) -> None:
        if not isinstance(store, EnsembleSource) or not isinstance(config, (FusionConfig, type(None))):
            raise ConfigurationError(f"EnsembleMemory(store, config) takes a MemoryStore and a FusionConfig, "
                                     f"got {type(store).__name__} and {type(config).__name__}")
        if not isinstance(max_workers, int) or max_workers < 1:
            raise ConfigurationError(f"max_workers must be an integer >= 1, got {max_workers!r}")
        if not isinstance(registry, (ArmRegistry, type(None))):
            raise ConfigurationError(f"registry must be an ArmRegistry (retrievers.registry), "
                                     f"got {type(registry).__name__}")
        self.store = store
        self.config = config or FusionConfig()
        self.registry = registry or BUILTIN_ARMS
        self.reranker: Reranker | None = as_reranker(reranker) if reranker is not None else None
        # the one read a constructor does: the ranker file (a local JSON of a few kB), so that a
        # missing or mismatched one is refused here rather than in every query (`learned`)
        self.ranker: Ranker | None = resolve_ranker(self.config, ranker, self.registry.names)
        self.optimizer = optimizer
        self.rules_off = check_rules_off(rules_off, tuple(r.__name__ for r in self.registry.rules()))
        self.clock = clock
        self._arms: dict[str, Retriever] = dict(arms or {})
        self._custom = frozenset(self._arms)
        self.config.check_arms(self._known())
        self._max_workers = max_workers
        self._fresh_runtime()

    @property
    def arm_names(self) -> tuple[str, ...]:
        """The arms this ensemble can run: its registry's, then its custom arms under other names."""
        return (*self.registry.names, *sorted(self._custom - set(self.registry.names)))

    def _known(self) -> frozenset[str]:
        """The arm names a config may weigh beyond the five: the registry's and the custom arms."""
        return self._custom | frozenset(self.registry.names)

    def _weight(self, arm: str) -> float:
        """An arm's base weight: the config's, else its registry default, else 1.0 (a custom arm)."""
        spec = self.registry.by_name.get(arm)
        return float(self.config.weights.get(arm, spec.weight if spec is not None else 1.0))

    def _timeout(self, arm: str) -> float:
        spec = self.registry.by_name.get(arm)
        return float(self.config.timeouts_s.get(arm, spec.timeout_s if spec is not None else 2.0))

    def _fresh_runtime(self) -> None:
        """What each ensemble (a copy too) keeps of its own: its pool, the scoped graph arm, the
        record of hung arms and lookups, the failure log, and whether it saw the model loaded. No I/O."""
        self._scoped_graph: ScopedGraphRetriever | None = None
        self._executor: cf.ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()  # two first queries must not make two pools
        self._hung, self._failure_log, self._lookup = HungArms(), FailureLog(_log), EntityLookup()
        self._embedder_ready = False  # `_ready_to_embed`

    def __copy__(self) -> EnsembleMemory:
        """A new ensemble over the same store, with everything this one was given or set (its
        type, settings, custom arms), but its own thread pool and arm cache: closing or
        reconfiguring a copy (a retriever copied per agent) leaves this one as it was. No I/O."""
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        twin._arms = {n: self._arms[n] for n in self._custom}  # not a live dict's items: arm() may add
        twin._fresh_runtime()
        return twin

    def __deepcopy__(self, memo: dict[int, Any]) -> EnsembleMemory:
        return self.__copy__()  # the store is a handle, the config frozen, custom arms the caller's

    def __reduce_ex__(self, protocol: Any) -> Any:
        refuse_pickle(self)

    # ------------------------------------------------------------------ public API
    def plan(self, query: str, *, namespace: str, now: datetime | None = None,
             types: Sequence[MemoryType | str] | None = None, arms: Sequence[str] | None = None,
             embed_text: str | Sequence[str] | None = None) -> tuple[ParsedQuery, QueryPlan]:
        """Stages 1 and 2 only: what `retrieve` with the same options would do for `query`, and why
        (the caller's forced types, embedding text and arms included)."""
        _, _, parsed, plan, _ = self._caller_plan(query, namespace, 1, now, types, arms, embed_text)
        return parsed, plan

    def _plan(self, query: str, namespace: str, now: datetime | None
              ) -> tuple[ParsedQuery, QueryPlan, ArmFailure | None]:
        """Parse and optimize. The entity lookup needs the graph backend; if that is down, the query
        goes on without known entities and the graph arm is reported failed, not the whole query."""
        now = self._now(now)
        matcher, failure = self._lookup(self.store, namespace, self._submit_fn,
                                        self._timeout(Arm.GRAPH))
        parsed = parse_query(query, now=now, matcher=matcher,
                             last_session_end=self.store.last_session_end(namespace),
                             max_chars=self.config.max_query_chars)
        share, damping = self._statistics(namespace, matcher)
        reg = self.registry
        if self.optimizer:
            extra = tuple(r for r in reg.rules() if r.__name__ not in self.rules_off)
            rules = with_arm_rules(tuple(r for r in DEFAULT_RULES if r.__name__ not in self.rules_off), extra)
            plan = optimize(parsed, rules=rules, arms=reg.names, needs=reg.needs())
        else:
            plan = optimize_off(parsed, arms=reg.names)
        return parsed, with_store(plan, parsed, self.optimizer, share, damping, matcher, self.rules_off), failure

    def _statistics(self, namespace: str, matcher: EntityMatcher | None
                    ) -> tuple[Callable[[frozenset[MemoryType]], float | None], Callable[[str], float] | None]:
        """What stage 2b reads from the store: a type filter's share of the namespace, and a seed's hub
        damping. Both come from one read of the per-type counts; a statistic that cannot be had
        is unknown (nothing is skipped for it), never a reason to fail the query."""
        try:
            counts = self.store.type_counts(namespace)
        except Exception:  # noqa: BLE001
            counts = None
        total = sum(counts.values()) if counts else 0
        damping = None
        if matcher is not None and total:
            mentions = matcher.mentions
            damping = lambda entity_id: hub_damping(mentions(entity_id), total)  # noqa: E731
        return (lambda types: filter_share(counts, types)), damping

    def retrieve(self, query: str, *, namespace: str, k: int = 10, now: datetime | None = None,
                 types: Sequence[MemoryType | str] | None = None, arms: Sequence[str] | None = None,
                 embed_text: str | Sequence[str] | None = None, reranker: object = None,
                 recency: float | None = None, collapse: bool | None = None,
                 min_score: float | None = None) -> Retrieval:
        """The top `k` memories for `query` in `namespace`, each with its explanation. `embed_text`:
        what the vector arms embed instead of the query (a HyDE answer, LlamaIndex's
        `custom_embedding_strs`; several texts are embedded one by one and averaged); BM25, entities
        and time still read `query`. After fusion (`ensemble.after_fusion`): `reranker` for this call
        (else the ensemble's), `recency` the recency list's weight (else the config's: its
        `current_state_recency` on "now" questions; 0: off), `collapse` near-duplicates (else the config's).
        A hit needs a fused score above 0 and at least `min_score` (else the config's floor)."""
        after = check_after(reranker, recency, collapse, min_score)
        job = self._prepare(query, namespace, k, now, types, arms, embed_text)
        job.after = after
        outcomes = self._wait(job.tasks)
        again = self._fallback(job, outcomes)
        if again is not None:  # a plan that needed no embedding found nothing: the full plan runs
            job, outcomes = again, self._wait(again.tasks)
        done = self._finish(job, outcomes)
        return self._done(done, self._wait([done.rerank])[RERANK] if done.rerank is not None else None)

    def _wait(self, tasks: Sequence[Task]) -> dict[str, Any]:
        """One round of tasks (arms, or the reranker's call), each under its timeout (`waiting`)."""
        return wait_all(tasks, self._submit, self._stuck_reason, self._timed_out)

    async def aretrieve(self, query: str, *, namespace: str, k: int = 10, now: datetime | None = None,
                        types: Sequence[MemoryType | str] | None = None, arms: Sequence[str] | None = None,
                        embed_text: str | Sequence[str] | None = None, reranker: object = None,
                        recency: float | None = None, collapse: bool | None = None,
                        min_score: float | None = None) -> Retrieval:
        """`retrieve` for asyncio: parsing, arms and hydration run off the event loop (planning and
        fusion on the loop's default executor, so hung arms can never hold them up); the reranker's
        call is awaited as the arms' are."""
        after = check_after(reranker, recency, collapse, min_score)
        loop = asyncio.get_running_loop()
        job = await loop.run_in_executor(
            None, lambda: self._prepare(query, namespace, k, now, types, arms, embed_text))
        job.after = after
        outcomes = await self._await(job.tasks)
        if job.plan.fallback is not None:  # reads the identifier's memories: off the loop too
            again = await loop.run_in_executor(None, self._fallback, job, outcomes)
            if again is not None:
                job, outcomes = again, await self._await(again.tasks)
        done = await loop.run_in_executor(None, self._finish, job, outcomes)
        return self._done(done, (await self._await([done.rerank]))[RERANK] if done.rerank is not None else None)

    async def _await(self, tasks: Sequence[Task]) -> dict[str, Any]:
        return await await_all(tasks, self._submit, self._stuck_reason, self._timed_out)

    def _fallback(self, job: Job, outcomes: Mapping[str, Any]) -> Job | None:
        """The full plan's job when a plan that needed no embedding found nothing or failed
        (`plans.missed`), else None. Sync and async both ask here."""
        gave_way = missed(job.plan, job.parsed, job.tasks, outcomes)
        if gave_way is None:
            return None
        plan = fallback_plan(job.plan, *gave_way)
        again = self._job(job.parsed, plan, job.namespace, job.k, False, job.started)
        again.after = job.after
        again.failures.extend(job.failures)
        note = f" (in the {job.plan.shortcut} plan; the full plan answered)"
        again.failures.extend(f for task in job.tasks for f in failed(task, outcomes.get(task.label), note, "shortcut"))
        again.timings.update(job.timings)
        again.timings["shortcut"] = ((time.perf_counter() - job.started) * 1000 - job.timings.get("plan", 0.0)
                                     - again.timings.get("model_load", 0.0))  # the full plan's load is its own
        return again

    # ------------------------------------------------------------------ hung arms (`hung_arms`)
    def _submit(self, task: Task) -> cf.Future[Any]:
        return self._submit_fn(self._timed, task)

    def _submit_fn(self, fn: Callable[..., Any], *args: Any) -> cf.Future[Any]:
        pool = self._pool()
        try:
            return pool.submit(fn, *args)
        except RuntimeError:  # close() shut this pool down after _pool() handed it out: use a new one
            return self._pool(dead=pool).submit(fn, *args)

    def _stuck_reason(self, task: Task) -> TimeoutError | None:
        return self._hung.reason(task.arms, task.timeout_s)

    def _timed_out(self, task: Task, fut: cf.Future[Any]) -> TimeoutError:
        return self._hung.timed_out(task.arms, task.timeout_s, fut)

    def close(self) -> None:
        self._lookup.clear()
        with self._pool_lock:
            pool, self._executor = self._executor, None
        if pool is not None:  # queries already running finish on the old pool; the next starts a new one
            pool.shutdown(wait=False)

    # ------------------------------------------------------------------ shared steps
    def _pool(self, dead: cf.ThreadPoolExecutor | None = None) -> cf.ThreadPoolExecutor:
        with self._pool_lock:
            if self._executor is None or self._executor is dead:
                self._executor = cf.ThreadPoolExecutor(self._max_workers, thread_name_prefix="fused-memory")
            return self._executor

    def _now(self, now: datetime | None) -> datetime:
        return require_aware(now, "now") if now is not None else self.clock()

    def arm(self, name: str) -> Retriever:
        if name not in self._arms:
            self._arms[name] = self.registry.make(name, self.store)
        return self._arms[name]

    def _shortcut_arm(self, name: str, plan: QueryPlan) -> Retriever | None:
        """The arm a plan that needs no embedding runs in place of the usual one (`plans.shortcut_arm`);
        a caller's own arm of that name is left as it is."""
        return None if name in self._custom else shortcut_arm(plan, name, self.store)

    def _scoped_arm(self, name: str, req: ArmRequest) -> Retriever | None:
        """The graph arm's scoped form (a vector arm) when the plan scoped it to hub entities and the
        caller did not replace the graph arm with one of their own."""
        if name != Arm.GRAPH or not req.scope or name in self._custom:
            return None
        if self._scoped_graph is None:
            self._scoped_graph = ScopedGraphRetriever(self.store)
        return self._scoped_graph

    def _caller_plan(self, query: str, namespace: str, k: int, now: datetime | None,
                     types: Sequence[MemoryType | str] | None, arms: Sequence[str] | None,
                     embed_text: str | Sequence[str] | None
                     ) -> tuple[int, frozenset[MemoryType] | None, ParsedQuery, QueryPlan, ArmFailure | None]:
        """The caller's options checked, then the plan as the rules and those options make it."""
        if not isinstance(query, str):
            raise QueryError(f"query must be a string, got {type(query).__name__}")
        arms = (arms,) if isinstance(arms, str) else arms  # "dense" is one arm, as types="fact" is one type
        k, forced = check_options(namespace, k, now, types, arms)
        if embed_text is not None:
            embed_text = check_embed_text(embed_text, self.config.max_query_chars)
        if arms is not None:
            unknown = [a for a in arms if a not in self.registry and a not in self._arms]
            if unknown:
                raise QueryError(f"unknown arm(s) {unknown}; arms are {list(self.registry.names)}"
                                 + (f" and the custom arms {sorted(self._custom)}" if self._custom else ""))
        self.config.check_arms(self._known())  # again: a copy's config may be replaced after it was built
        parsed, plan, lookup_failure = self._plan(query, namespace, now)
        plan = with_caller(plan, forced=forced, embed_text=embed_text, arms=arms,
                           custom=tuple(n for n in self._custom if n not in self.registry))  # no rule plans them
        return k, forced, parsed, plan, lookup_failure

    def _prepare(self, query: str, namespace: str, k: int, now: datetime | None,
                 types: Sequence[MemoryType | str] | None, arms: Sequence[str] | None,
                 embed_text: str | Sequence[str] | None) -> Job:
        started = time.perf_counter()
        k, forced, parsed, plan, lookup_failure = self._caller_plan(query, namespace, k, now, types, arms, embed_text)
        job = self._job(parsed, plan, namespace, k, forced is not None, started)
        if lookup_failure is not None:
            job.failures.append(lookup_failure)
        job.timings["plan"] = (time.perf_counter() - started) * 1000 - job.timings.get("model_load", 0.0)
        return job

    def _job(self, parsed: ParsedQuery, plan: QueryPlan, namespace: str, k: int, forced: bool, started: float) -> Job:
        depth = max(self.config.depth, k)
        base = ArmRequest(query=parsed, namespace=namespace, k=depth, window=parsed.temporal_window,
                          max_hops=plan.max_hops, embed_text=plan.embed_text, asked=plan.asked_relations)
        ahead: dict[str, Memory] = {}
        job = Job(parsed, plan, namespace, k, self._tasks(plan, base, forced, k, ahead), started, ahead=ahead,
                  types=plan.type_hints if forced else None)
        if any(t.label.startswith(VECTOR_TASK) for t in job.tasks):
            self._ready_to_embed(job)
        return job

    def _ready_to_embed(self, job: Job) -> None:
        """The embedding model loaded before the arms start, when it loads on first use: the load
        (~0.3 s, over 2 s on a busy host) is the first query's own time (`timings_ms["model_load"]`),
        not a dense timeout that fails it. Called where the job is built, in the caller's thread
        (an executor's for `aretrieve`), so sync and async share it."""
        if self._embedder_ready or not isinstance(self.store, ReadyToEmbed):
            return
        t0 = time.perf_counter()
        try:
            loaded_now = self.store.ready_to_embed()
        except Exception:  # noqa: BLE001 - the vector task meets the same error and reports it
            loaded_now = False  # and tries the load itself on later queries, under its timeout
        self._embedder_ready = True  # a model once loaded stays loaded: later queries skip the checks (~10 us)
        if loaded_now:
            job.timings["model_load"] = (time.perf_counter() - t0) * 1000

    def _request_for(self, arm: str, plan: QueryPlan, base: ArmRequest, forced: bool) -> ArmRequest:
        """What one arm is asked. The caller's `types=` (`forced`) is a filter in every arm (none
        widens: "only memories of these types"); the optimizer's hints filter dense and lexical
        when explicit (widened when too few, `widening`) and lead the type arm."""
        if plan.shortcut is not None:
            return shortcut_request(plan, arm, base)
        hints = plan.type_hints or None
        if forced:
            base = replace(base, types=hints)
        if arm == Arm.GRAPH and plan.graph_scope:
            return replace(base, scope=plan.graph_scope)
        if arm == Arm.TYPE:
            return replace(base, types=hints)
        if arm in WIDENABLE and plan.hard_filter:
            return replace(base, types=hints)
        return base

    def _tasks(self, plan: QueryPlan, base: ArmRequest, forced: bool, k: int, ahead: dict[str, Memory]) -> list[Task]:
        """One task per arm, and one for the vector arms together. In the identifier plan, which
        checks what BM25 found, BM25 also reads its own top `k` memories (`plans.with_memories`)."""
        built: list[tuple[str, Retriever | Exception, ArmRequest]] = []
        for name in plan.arms:
            req = self._request_for(name, plan, base, forced)
            try:
                built.append((name, self._shortcut_arm(name, plan) or self._scoped_arm(name, req) or self.arm(name),
                              req))
            except Exception as exc:  # noqa: BLE001 - an arm that cannot even be built is a failed arm
                built.append((name, exc, req))
        vector_jobs = [(name, arm, req) for name, arm, req in built if isinstance(arm, VectorArm)]
        # the identifier plan checks its first memories for the identifier: as many whatever k is,
        # so whether it gives way to the full plan, and so the first answer, does not depend on k
        read = self.config.after_depth if plan.shortcut == IDENTIFIER else 0
        # the other arms read ahead while the query is embedded (`slack`): the candidate window
        slack = Slack(max(k, self.config.after_depth), ahead) if vector_jobs and len(vector_jobs) < len(built) else None
        tasks = [Task(name, (name,), 1.0, raiser(arm)) if isinstance(arm, Exception) else
                 Task(name, (name,), self._timeout(name), self._single(name, arm, req, forced, read, slack))
                 for name, arm, req in built if not isinstance(arm, VectorArm)]
        if vector_jobs:
            # submitted first: the query embedding is the start of the longest path, and onnxruntime
            # releases the GIL while it runs, so BM25 and the graph run inside it
            # (docs/decisions/0015-fan-out-order-and-ingest.md).
            names = tuple(n for n, _, _ in vector_jobs)
            tasks.insert(0, Task(VECTOR_TASK + "+".join(names), names,
                                  max(self._timeout(n) for n in names),
                                  self._batch(vector_jobs, forced, slack)))
        return tasks

    def _widen(self, name: str, req: ArmRequest, hits: list[Hit], forced: bool) -> bool:
        """Only the optimizer's hints widen: the caller's types are a filter (`_request_for`)."""
        return not forced and needs_widening(name, req, hits, self.config.widen_below)

    def _single(self, name: str, arm: Retriever, req: ArmRequest, forced: bool, read: int = 0,
                slack: Slack | None = None) -> Callable[[], Outcome]:
        def run() -> Outcome:
            hits = checked(name, arm.search(req))
            note = ""
            if self._widen(name, req, hits, forced):
                again = checked(name, arm.search(req.without_type_filter()))
                hits, note = widened(again, req.k), "widened"
            if read:  # a custom arm under the name too: the check reads memories by id only
                hits = with_memories(self.store, req.namespace, hits, read)
            elif slack is not None:  # into the job's `ahead`, for hydration; the hits stay as the arm gave them
                read_ahead(self.store, req.namespace, hits, slack)
            return {name: (hits, note)}
        return run

    def _batch(self, jobs: Sequence[tuple[str, VectorArm, ArmRequest]], forced: bool,
               slack: Slack | None = None) -> Callable[[], Outcome]:
        def run() -> Outcome:
            try:
                vector = self.store.embed_query(jobs[0][2].text_to_embed())
            finally:
                if slack is not None:
                    slack.close()
            reqs = [replace(r, vector=vector) for _, _, r in jobs]
            results, pooled = run_vector_arms(self.store, [(arm, r) for (_, arm, _), r in zip(jobs, reqs, strict=True)],
                                              self.config.pool_min)
            out = {name: (hits, "pooled" if i in pooled else "") for i, ((name, _, _), hits)
                   in enumerate(zip(jobs, results, strict=True))}
            redo = [(i, jobs[i][1], reqs[i].without_type_filter()) for i, (name, _, _) in enumerate(jobs)
                    if self._widen(name, reqs[i], results[i], forced)]
            if redo:
                again, _ = run_vector_arms(self.store, [(arm, r) for _, arm, r in redo], self.config.pool_min)
                for (i, _, _), hits in zip(redo, again, strict=True):
                    out[jobs[i][0]] = (widened(hits, reqs[i].k), "widened")
            return out
        return run

    @staticmethod
    def _timed(task: Task) -> tuple[Outcome, float]:
        t0 = time.perf_counter()
        result = task.fn()
        return result, (time.perf_counter() - t0) * 1000

    def _finish(self, job: Job, outcomes: Mapping[str, Any], trace: Trace | None = None) -> Staged:
        """Fuse what the arms answered and run the stage after fusion; `trace` (for `explain_miss`)
        keeps what each step saw."""
        t0 = time.perf_counter()
        results: dict[str, list[Hit]] = {}
        failures: list[ArmFailure] = list(job.failures)
        how: dict[str, list[str]] = {"widened": [], "pooled": []}
        for task in job.tasks:
            outcome = outcomes.get(task.label)
            if isinstance(outcome, StoreClosed):  # the caller closed the store: not an arm's fault
                raise outcome
            if isinstance(outcome, BaseException) or outcome is None:
                failures.extend(failed(task, outcome))
                continue
            by_arm, ms = outcome
            for arm in task.arms:
                hits, note = by_arm.get(arm, ([], ""))
                results[arm] = hits
                job.timings[arm] = ms
                if note:
                    how[note].append(arm)
        if job.tasks and not results:
            causes = {f.arm: f.reason for f in failures}
            raise BackendUnavailable("every retriever failed: " + "; ".join(f"{a}: {r}" for a, r in causes.items()),
                                     causes)
        if Arm.TEMPORAL in results and not results[Arm.TEMPORAL] and job.parsed.temporal_window is not None \
                and job.plan.shortcut is None and job.plan.soft_window <= 0:  # its window holds nothing
            job.plan = soft_window_plan(job.plan, ran=True)
        weights = {a: self._weight(a) * job.plan.weight(a) for a in results}
        learned: dict[str, Learned] = {}
        order = ordered_fusion(self.ranker, job, self.config, failures, learned)
        if trace is not None:
            trace.results, trace.failures, trace.widened = results, failures, how["widened"]
            trace.rrf = fuse(results, weights, self.config.k)
            trace.ordered = order(results, weights, self.config.k, limit=max(len(trace.rrf), 1))
        ranked, unread, rerank, reranker = after_fusion(self.store, job, results, weights, self.config, self.reranker,
                                                        order, trace)
        ranked = with_learned(ranked, learned)
        failures.extend(unread)
        job.timings["fuse"] = (time.perf_counter() - t0) * 1000
        return staged(job, ranked, failures, list(results), how["widened"], how["pooled"], rerank, reranker)

    def explain_miss(self, query: str, memory_id: str, *, namespace: str, k: int = 10, now: datetime | None = None,
                     types: Sequence[MemoryType | str] | None = None, arms: Sequence[str] | None = None,
                     embed_text: str | Sequence[str] | None = None, reranker: object = None,
                     recency: float | None = None, collapse: bool | None = None,
                     min_score: float | None = None) -> MissExplanation:
        """Why `memory_id` is not (or is) in the top `k` for `query`: each arm's rank and score for it,
        or why the arm did not return it (skipped by the optimizer and why, failed, filtered out by
        the caller's types or the window, no entity or word in common, below the arm's depth), its
        fused rank and score against the k-th hit's, its place in the learned order, and what each
        step after fusion did to it (`ensemble.misses`). The query runs as `retrieve` runs it, with
        the same `now`; `explain()` on the answer says it in lines."""
        if not isinstance(memory_id, str) or not memory_id:
            raise QueryError(f"memory_id must be a memory's id, got {memory_id!r}")
        after = check_after(reranker, recency, collapse, min_score)
        now = self._now(now)
        job = self._prepare(query, namespace, k, now, types, arms, embed_text)
        job.after = after
        outcomes = self._wait(job.tasks)
        again = self._fallback(job, outcomes)
        if again is not None:
            job, outcomes = again, self._wait(again.tasks)
        trace = Trace()
        done = self._finish(job, outcomes, trace)
        retrieval = self._done(done, self._wait([done.rerank])[RERANK] if done.rerank is not None else None)
        return explain_miss(self.store, job, trace, retrieval, memory_id, job.k, depth=max(self.config.depth, job.k),
                            arms=self.arm_names, floor=after.floor(self.config.min_score))

    def _done(self, done: Staged, rerank: Any) -> Retrieval:
        """The retrieval, with the reranker's answer (or failure) applied to the staged ranking."""
        job = done.job
        hits, reranked_by = done.hits(rerank, self.config)
        job.timings["total"] = (time.perf_counter() - job.started) * 1000
        self._failure_log.report(done.failures, (*done.answered, *(("rerank",) if reranked_by else ())))
        return Retrieval(hits=hits, plan=job.plan, parsed=job.parsed, failures=tuple(done.failures),
                         widened=done.widened, timings_ms=dict(job.timings), pooled=done.pooled,
                         reranked_by=reranked_by)
