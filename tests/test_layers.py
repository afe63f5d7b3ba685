"""One-way doors: no import circle among harness's modules, and the layers import only
downward (the runtime knows nothing of the harness around it; scenarios nothing of runs).

Imports under `if TYPE_CHECKING:` are annotations, not dependencies, and are left out;
imports inside functions count, since they are dependencies all the same.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Collection
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


# Statement lists an import can sit in, at any depth (function, class, if, try, with, loop
# and match bodies). Imports are statements, so expressions are never entered: a walk of
# every node (ast.NodeVisitor) took ten times as long.
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def imports(name: str, path: Path, known: Collection[str]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    named: set[str] = set()
    statements = list(ast.parse(path.read_text("utf-8")).body)
    while statements:
        node = statements.pop()
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            named.add(base)
            named.update(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            statements += node.orelse  # the guarded imports are annotations only
        else:
            for field in _BODIES:
                statements += getattr(node, field, ())
    resolved = set()
    for target in named:
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name:
            resolved.add(target)
    return resolved


@functools.cache
def graph() -> dict[str, set[str]]:
    """Built on first use, not at import: every xdist worker imports this module to collect
    it, and only one runs its tests."""
    found = modules()
    return {name: imports(name, path, found) for name, path in found.items()}


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
    assert cycles(graph()) == []


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
        for name, targets in graph().items()
        if within(name, layer)
        for target in targets
        if any(within(target, p) for p in may_not_import) and not within(target, layer)
    )
    assert wrong == []


def test_imports_are_found_in_every_statement_body_but_not_under_type_checking(
    tmp_path: Path,
) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "import p.a\n"
        "if TYPE_CHECKING:\n    import p.hidden\nelse:\n    import p.b\n"
        "def f():\n    from . import c\n"
        "class K:\n    def g(self):\n        with x:\n            import p.d\n"
        "try:\n    import p.e\nexcept ImportError:\n    import p.f\nfinally:\n    import p.g\n"
        "for _ in y:\n    pass\nelse:\n    import p.h\n"
        "match z:\n    case 1:\n        import p.i\n",
        "utf-8",
    )
    known = {f"p.{m}" for m in "abcdefghi"} | {"p.hidden", "p.m"}
    assert imports("p.m", source, known) == known - {"p.hidden", "p.m"}
