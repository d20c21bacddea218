"""The README's Python runs as written: every ```python block, in order, as one script (each block
uses what the ones before it defined, as a reader would paste them), so the README cannot drift
from the code. Where a block needs what only the reader has, the script is given it first: a chat
model (`model`: the examples' scripted tool-calling model stands in for an LLM) and the Qdrant
client and Neo4j driver "of your own" (a Qdrant client in local mode and a Bolt driver that is
built but never connected: `MemoryStore.connect` does no I/O until the store is used). The real
store, embedder, frameworks, LangMem tools and agent run. Each integration section names the
extra it needs."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"^```python\n(.*?)^```", README, flags=re.S | re.M)


def _scripted_model() -> Any:
    spec = importlib.util.spec_from_file_location("readme_langmem_example", ROOT / "examples" /
                                                  "langgraph_langmem_agent.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.ScriptedMemoryModel()


@pytest.mark.slow
def test_every_python_block_of_the_readme_runs_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    import neo4j
    from qdrant_client import QdrantClient

    assert len(BLOCKS) >= 8
    monkeypatch.chdir(tmp_path)  # the Quickstart's store goes to ./memdata
    driver = neo4j.GraphDatabase.driver("bolt://localhost:7687")
    scope: dict[str, Any] = {"__name__": "readme", "model": _scripted_model(),
                             "my_qdrant_client": QdrantClient(location=":memory:"), "my_neo4j_driver": driver}
    try:
        exec(compile("\n".join(BLOCKS), "README.md", "exec"), scope)  # noqa: S102 - the README is the test
    finally:
        for name in ("ens",):
            if name in scope:
                scope[name].close()
        driver.close()
    out = capsys.readouterr().out
    assert out.startswith("My badge ID is E-47821 dense#1(")
    assert "'graph': 'no entity in the query'" in out  # the Quickstart prints why arms were skipped
    # "A life, remembered": the move is the current home, Leeds the older version, and why it is not first
    assert "York" in scope["home"].hits[0].memory.text and scope["leeds"].superseded_by is not None
    assert "versions_ordered: #1 -> #2" in out and "(slot: user home)" in out
    saved = [m.text for m in scope["ens"].store.memories("memories.alice")]  # LangMem's tool saved it
    assert any("I take my coffee black" in text for text in saved), saved


@pytest.mark.parametrize(("section", "extra"), [("## LangChain", "langchain"), ("## LlamaIndex", "llama-index"),
                                                ("## Agents that write memory", "langgraph")])
def test_each_integration_section_names_its_extra(section: str, extra: str) -> None:
    body = README.split(section + "\n", 1)[1].split("\n## ", 1)[0]
    assert f'pip install "fused-memory[{extra}]"' in body


def test_the_check_command_is_ci_s_and_type_checks_the_integrations_too() -> None:
    """The README's second command, CONTRIBUTING's and `.ci/run`'s are one command line, and its
    type check covers the framework packages as well as the core (`mypy fused_memory` alone left
    the integrations unchecked, and they had drifted into type errors)."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    commands = [line for text in (README, (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8"))
                for line in text.splitlines() if line.startswith("python3 -m venv") and "pytest" in line]
    assert commands == [ci, ci]
    assert " && .venv/bin/mypy fused_memory integrations && " in ci
