"""The core is framework-free and each adapter needs only its own framework.

Checked in fresh interpreters (sys.modules is per process): importing `fused_memory` and using its
store and ensemble modules loads neither LangChain, LangGraph nor LlamaIndex; the LlamaIndex adapter
imports and builds its retrievers with LangChain made unimportable, and the LangChain adapter with
LlamaIndex made unimportable (what `pip install "fused-memory[llama-index]"` / `[langchain]` gives);
the LangChain adapter's retrievers and tools need no LangGraph, and its `FusedMemoryStore` says
which extra installs it.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

#: A meta-path finder that makes the named top-level packages unimportable, as if not installed.
_BLOCK = textwrap.dedent("""
    import importlib.abc, sys
    class Block(importlib.abc.MetaPathFinder):
        def __init__(self, names): self.names = names
        def find_spec(self, name, path=None, target=None):
            if any(name == n or name.startswith(n + ".") for n in self.names):
                raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)", name=name)
            return None
    sys.meta_path.insert(0, Block(BLOCKED))
""")


def _run(code: str, blocked: tuple[str, ...] = ()) -> str:
    src = f"BLOCKED = {blocked!r}\n" + (_BLOCK if blocked else "") + textwrap.dedent(code)
    proc = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_core_imports_no_framework() -> None:
    out = _run("""
        import sys
        import fused_memory
        import fused_memory.ensemble, fused_memory.store.memory_store, fused_memory.retrievers, fused_memory.cli
        import fused_memory.adapters, fused_memory.agent_writes
        import fused_memory.ranking, fused_memory.evaluation.learning  # training imports scikit-learn when it runs
        from fused_memory.embeddings import default_embedder
        fused_memory.ranking.default_ranker()
        frameworks = ("langchain_core", "langchain", "llama_index", "langgraph", "langmem", "sklearn", "lightgbm")
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in frameworks)
        print(loaded)
    """)
    assert out.strip() == "[]"


@pytest.mark.slow  # fresh interpreters
def test_llamaindex_adapter_without_langchain(tmp_path) -> None:
    out = _run(f"""
        import sys
        from fused_memory.embeddings import HashingEmbedder
        from fused_memory.store.memory_store import MemoryStore
        from llama_index.retrievers.fused_memory import EnsembleMemoryRetriever, DenseMemoryRetriever, memory_tool
        store = MemoryStore.embedded({str(tmp_path)!r}, embedder=HashingEmbedder(dim=64), ner=False)
        r = DenseMemoryRetriever(store, namespace="n", k=1)
        memory_tool(EnsembleMemoryRetriever(store, namespace="n"))
        print(sorted(m for m in sys.modules if m.startswith("langchain_core")))
    """, blocked=("langchain_core", "langchain"))
    assert out.strip() == "[]"


@pytest.mark.slow  # fresh interpreters
def test_langchain_adapter_without_llamaindex(tmp_path) -> None:
    out = _run(f"""
        import sys
        from fused_memory.embeddings import HashingEmbedder
        from fused_memory.store.memory_store import MemoryStore
        from langchain_fused_memory import (DenseMemoryRetriever, EnsembleMemoryRetriever, QueryOptimizerChain,
                                            memory_tool)
        store = MemoryStore.embedded({str(tmp_path)!r}, embedder=HashingEmbedder(dim=64), ner=False)
        memory_tool(EnsembleMemoryRetriever(store=store, namespace="n"), "recall", "memories")
        QueryOptimizerChain(store=store, namespace="n")
        print(sorted(m for m in sys.modules if m.startswith("llama_index")))
    """, blocked=("llama_index.core",))
    assert out.strip() == "[]"


@pytest.mark.slow  # fresh interpreters
def test_langchain_adapter_is_lazy() -> None:
    """`import langchain_fused_memory` alone loads no LangChain (the LlamaIndex adapter relies on it)."""
    out = _run("""
        import sys
        import langchain_fused_memory, fused_memory.adapters
        print(sorted(m for m in sys.modules if m.startswith("langchain_core")))
        print(langchain_fused_memory.EnsembleMemoryRetriever.__module__)
    """)
    assert out.split("\n")[:2] == ["[]", "langchain_fused_memory.retrievers"]


@pytest.mark.slow  # fresh interpreters
def test_langchain_adapter_without_langgraph(tmp_path) -> None:
    """`[langchain]` alone: retrievers and all three tools work; the store names the extra it needs."""
    out = _run(f"""
        import sys
        from fused_memory import MissingDependency
        from fused_memory.embeddings import HashingEmbedder
        from fused_memory.store.memory_store import MemoryStore
        from langchain_fused_memory import (EnsembleMemoryRetriever, memory_delete_tool, memory_tool,
                                            memory_write_tool)
        import langchain_fused_memory
        store = MemoryStore.embedded({str(tmp_path)!r}, embedder=HashingEmbedder(dim=64), ner=False)
        retriever = EnsembleMemoryRetriever(store=store, namespace="n")
        memory_tool(retriever), memory_write_tool(retriever), memory_delete_tool(retriever)
        try:
            langchain_fused_memory.FusedMemoryStore
        except MissingDependency as exc:
            print(exc)
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("langgraph", "langmem")))
    """, blocked=("langgraph", "langmem"))
    assert out.splitlines() == ['langgraph is not installed: pip install "fused-memory[langgraph]"', "[]"]


@pytest.mark.slow  # fresh interpreters
def test_langgraph_loads_only_with_the_store() -> None:
    out = _run("""
        import sys
        import langchain_fused_memory
        langchain_fused_memory.memory_write_tool, langchain_fused_memory.EnsembleMemoryRetriever
        print(sorted(m for m in sys.modules if m.startswith("langgraph")))
        print(langchain_fused_memory.FusedMemoryStore.__module__)
    """)
    assert out.split("\n")[:2] == ["[]", "langchain_fused_memory.langgraph_store"]


@pytest.mark.slow  # fresh interpreters
def test_llamaindex_adapter_without_its_extra_names_the_extra() -> None:
    """As the LangChain adapter does: it ended in a raw `No module named 'llama_index.core'`."""
    out = _run("""
        from fused_memory import MissingDependency
        try:
            from llama_index.retrievers.fused_memory import EnsembleMemoryRetriever
        except MissingDependency as exc:
            print(exc)
    """, blocked=("llama_index.core",))
    assert out.strip() == 'llama-index-core is not installed: pip install "fused-memory[llama-index]"'
