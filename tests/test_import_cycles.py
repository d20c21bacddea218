"""No import cycles between the modules of `fused_memory`, counting every import grimp finds: at
module level, inside functions and under `if TYPE_CHECKING:` (grimp keeps those unless told
`exclude_type_checking_imports=True`). The layers contract (`lint-imports`) only orders the parts;
a cycle inside one part, or through an import a function makes, passes it, and still means neither
module can be read or moved without the other."""

from __future__ import annotations

import importlib
import textwrap
from pathlib import Path

import grimp
import pytest


def import_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (or a module importing itself),
    each sorted, found by Tarjan's algorithm without recursion."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[module] = min(low[module], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                if len(component) > 1 or graph.direct_import_exists(importer=module, imported=module):
                    cycles.append(sorted(component))
    return sorted(cycles)


def _where(graph: grimp.ImportGraph, cycle: list[str]) -> str:
    """Each import inside `cycle`, as `importer:line -> imported: the line`, so a failure says where."""
    lines = []
    for importer in cycle:
        for imported in sorted(graph.find_modules_directly_imported_by(importer) & set(cycle)):
            for detail in graph.get_import_details(importer=importer, imported=imported):
                lines.append(f"  {importer}:{detail['line_number']} -> {imported}: {detail['line_contents']}")
    return "\n".join(lines)


def test_the_package_has_no_import_cycles() -> None:
    graph = grimp.build_graph("fused_memory", include_external_packages=False, cache_dir=None)
    cycles = import_cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(f"{' <-> '.join(c)}\n{_where(graph, c)}" for c in cycles)


def test_the_check_finds_cycles_through_functions_and_type_checking(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """On a package written here: a cycle closed by an import inside a function, one closed under
    TYPE_CHECKING, and one-way imports that are no cycle."""
    package = tmp_path / "cyclic_pkg"
    files = {
        "__init__.py": "",
        "a.py": "from . import b\n",
        "b.py": "def later():\n    from . import a\n    return a\n",
        "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .d import D\n",
        "d.py": "from . import c\nclass D: ...\n",
        "e.py": "from . import a, c\n",
    }
    package.mkdir()
    for name, text in files.items():
        (package / name).write_text(textwrap.dedent(text), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    graph = grimp.build_graph("cyclic_pkg", cache_dir=None)
    assert import_cycles(graph) == [["cyclic_pkg.a", "cyclic_pkg.b"], ["cyclic_pkg.c", "cyclic_pkg.d"]]
