"""The public API is pinned: what each public module exports, and that the adapters and examples use
nothing else. A name added to or dropped from an `__all__` must be added or dropped here too, on
purpose: callers import these names, and every other module is internal and may move."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PUBLIC: dict[str, set[str]] = {
    "fused_memory": {
        "__version__", "MemoryStore", "EnsembleMemory",
        "Memory", "MemoryType", "TimeWindow", "Entity", "EntityMention", "Relation",
        "EntityCandidate", "EntityRef", "ParsedQuery", "QueryPlan", "ARMS",
        "Hit", "Contribution", "FusedHit", "ArmFailure", "Retrieval",
        "FusionConfig", "StoreConfig",
        "FusedMemoryError", "ConfigurationError", "BackendError", "BackendUnavailable", "EmbeddingMismatch",
        "QueryError", "InvalidMemory", "MissingDependency", "StoreClosed", "NotPicklable",
        "ArmRequest", "Retriever", "Reranker", "conversation_context",
        "Arm", "ArmSpec", "ArmRegistry", "BUILTIN_ARMS",
    },
    "fused_memory.adapters": {
        "ARM_RETRIEVERS", "arm_class", "ArmReport", "CallOptions", "EnsembleSource", "DEFAULT_TOOL_DESCRIPTION",
        "DEFAULT_TOOL_NAME", "LLM_HIDDEN_KEYS", "NO_MEMORIES", "RETRIEVAL_KEYS", "answered", "arm_reports",
        "bound_ensemble", "hit_metadata", "memory_line", "missing_extra", "resolve_ensemble", "writable_store",
    },
    "fused_memory.agent_writes": {
        "WRITE_TOOL_NAME", "WRITE_TOOL_DESCRIPTION", "DELETE_TOOL_NAME", "DELETE_TOOL_DESCRIPTION", "WriteArguments",
        "MemoryWriteInput", "MemoryDeleteInput",
        "write_arguments", "parse_time", "with_session_context", "remember", "aremember", "forget", "aforget",
        "saved_answer", "forgotten_answer", "refuse_unknown",
    },
    "fused_memory.backends": {
        "VectorBackend", "LexicalIndex", "GraphStore", "PayloadWriter", "PayloadLister", "LiveNamespaces",
        "VectorReader", "TypeCounter", "RebuiltOnOpen", "Reconcilable", "VectorFilter", "VectorQuery", "VectorRecord",
        "ScoredPayload", "LexicalDoc",
        "SparseSearch", "FacetCounter", "SparseVector", "SparseQuery", "SparseAnswer", "OrderedScan",
        "PersistedIndex", "IndexState",
    },
    "fused_memory.demo": {"DEMO_NAMESPACE", "DEMO_NOW", "DEMO_QUERIES", "DEMO_RELATIONS", "demo_memories"},
    "fused_memory.embeddings": {
        "Embedder", "EmbedderId", "HashingEmbedder", "LangChainEmbedder", "LlamaIndexEmbedder", "MiniLMEmbedder",
        "as_embedder", "default_embedder", "is_embedder",
    },
    "fused_memory.rerank": {
        "Reranker", "LangChainReranker", "LlamaIndexReranker", "as_reranker", "check_scores", "reranker_name",
    },
    "fused_memory.evaluation": {
        "EvalDataError", "EvalDataset", "EvalMemory", "EvalQuery", "EvalReport", "Evaluator", "QueryResult",
        "System", "default_systems", "load_dataset", "load_memories", "load_queries", "mean_scores",
        "metric_names", "ndcg_at_k", "rank_by_score", "recall_at_k", "run_bench", "run_eval", "score_query",
        "ChurnQuery", "ChurnSet", "churn_set",
    },
    "langchain_fused_memory": {
        "DenseMemoryRetriever", "BM25MemoryRetriever", "GraphMemoryRetriever", "TemporalMemoryRetriever",
        "TypeFilterMemoryRetriever", "EnsembleMemoryRetriever", "FusedMemoryRetriever", "QueryOptimizerChain",
        "memory_tool", "memory_write_tool", "memory_delete_tool", "to_documents", "FusedMemoryStore", "arm_retriever",
    },
    "llama_index.retrievers.fused_memory": {
        "DenseMemoryRetriever", "BM25MemoryRetriever", "GraphMemoryRetriever", "TemporalMemoryRetriever",
        "TypeFilterMemoryRetriever", "EnsembleMemoryRetriever", "FusedMemoryRetriever", "MemoryNode", "MemoryTool",
        "memory_tool", "to_nodes", "memory_write_tool", "memory_delete_tool", "MemoryWriteTool", "MemoryDeleteTool",
        "FusedMemoryBlock", "arm_retriever",
    },
}


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_each_public_module_exports_exactly_its_pinned_names(module: str) -> None:
    mod = importlib.import_module(module)
    assert len(mod.__all__) == len(set(mod.__all__)), f"{module}.__all__ repeats a name"
    assert set(mod.__all__) == PUBLIC[module]
    for name in mod.__all__:
        assert getattr(mod, name) is not None, f"{module}.{name} does not resolve"


def _fused_memory_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every `fused_memory...` module a file imports from, names included when
    they are modules themselves (`from fused_memory import adapters`)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith("fused_memory"):
            out.append((node.lineno, node.module or ""))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.startswith("fused_memory")]
    return out


def test_adapters_and_examples_import_only_public_names() -> None:
    files = [*sorted((ROOT / "integrations").rglob("*.py")), *sorted((ROOT / "examples").rglob("*.py"))]
    assert files
    private = [f"{p.relative_to(ROOT)}:{line} imports {mod}"
               for p in files for line, mod in _fused_memory_imports(p) if mod not in PUBLIC]
    assert not private, "\n".join(private)


def test_readme_imports_only_public_names() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [b.split("\n", 1)[1] for b in readme.split("```python")[1:]]
    code = "\n".join(b.split("```", 1)[0] for b in blocks)
    mods = [line.split()[1] for line in code.splitlines()
            if line.strip().startswith(("from fused_memory", "import fused_memory"))]
    assert mods, "the README shows no import"
    assert [m for m in mods if m not in PUBLIC] == []


def test_the_packages_ship_type_information() -> None:
    for pkg in ("fused_memory", "integrations/langchain_fused_memory",
                "integrations/llama_index/retrievers/fused_memory"):
        assert (ROOT / pkg / "py.typed").is_file(), pkg
