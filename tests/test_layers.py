"""One-way doors: no import circle among harness's modules, and the layers import only
downward (the runtime knows nothing of the harness around it; scenarios nothing of runs).

Imports under `if TYPE_CHECKING:` are annotations, not dependencies, and are left out;
imports inside functions count, since they are dependencies all the same.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PACKAGE = ROOT / "harness"


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


MODULES = modules()


def imports(name: str, path: Path) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    named: set[str] = set()

    class Visitor(ast.NodeVisitor):
        def visit_If(self, node: ast.If) -> None:
            if "TYPE_CHECKING" in ast.unparse(node.test):
                for child in node.orelse:
                    self.visit(child)
                return
            self.generic_visit(node)

        def visit_Import(self, node: ast.Import) -> None:
            named.update(alias.name for alias in node.names)

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            named.add(base)
            named.update(f"{base}.{alias.name}" for alias in node.names)

    Visitor().visit(ast.parse(path.read_text("utf-8")))
    resolved = set()
    for target in named:
        while target and target not in MODULES:
            target = target.rpartition(".")[0]
        if target and target != name:
            resolved.add(target)
    return resolved


GRAPH = {name: imports(name, path) for name, path in MODULES.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_circle_anywhere_in_harness() -> None:
    assert cycles(GRAPH) == []


def test_the_cycle_finder_finds_one() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize(
    ("layer", "may_not_import"),
    [
        ("harness.runtime", ("harness",)),  # only itself: the code under test stands alone
        ("harness.scenario", ("harness.run", "harness.adapters", "harness._cli")),
        ("harness.run", ("harness.adapters", "harness._cli")),
        ("harness._seam", ("harness.run", "harness.adapters")),
    ],
)
def test_layers_import_only_downward(layer: str, may_not_import: tuple[str, ...]) -> None:
    def within(module: str, package: str) -> bool:
        return module == package or module.startswith(package.rstrip(".") + ".")

    wrong = sorted(
        f"{name} -> {target}"
        for name, targets in GRAPH.items()
        if within(name, layer)
        for target in targets
        if any(within(target, p) for p in may_not_import) and not within(target, layer)
    )
    assert wrong == []
