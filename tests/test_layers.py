"""One-way doors: no import circle among harness's modules, and the layers import only
downward (the runtime knows nothing of the harness around it; scenarios nothing of runs).

Imports inside functions count, since they are dependencies all the same. For the layers,
imports under `if TYPE_CHECKING:` count too (an annotation that names a higher layer is
half a contract living above it); for circles they are left out, since a type-only loop
costs nothing at run time.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Collection
from pathlib import Path

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


def imports(name: str, path: Path, known: Collection[str], *, type_only: bool = False) -> set[str]:
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
        elif (
            isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test) and not type_only
        ):
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
def graph(type_only: bool = False) -> dict[str, set[str]]:
    """Built on first use, not at import: every xdist worker imports this module to collect
    it, and only one runs its tests. `type_only`: with the TYPE_CHECKING imports."""
    found = modules()
    return {name: imports(name, path, found, type_only=type_only) for name, path in found.items()}


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


# The layers, from the ground up: a module may import its own layer and those below it,
# nothing above (README, "What is here"). Each entry is a package or a module.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("harness.runtime",),  # the code under test: it imports nothing of the harness
    ("harness._paths",),  # where the corpus lives
    ("harness.scenario",),
    ("harness.contract",),
    ("harness.fake",),
    ("harness.adapters",),
    ("harness.run",),
    ("harness.cli",),
    ("harness.pytest_plugin", "harness.__main__", "harness"),
)


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def layer_of(module: str) -> int:
    """The layer a module stands on: its most specific entry (`harness` is the package's
    own face, the top)."""
    best, where = "", -1
    for i, entries in enumerate(LAYERS):
        for entry in entries:
            if _within(module, entry) and len(entry) > len(best):
                best, where = entry, i
    return where


def test_every_module_stands_on_a_layer() -> None:
    assert sorted(m for m in graph() if layer_of(m) < 0) == []


def test_layers_import_only_downward() -> None:
    wrong = sorted(
        f"{name} -> {target}"
        for name, targets in graph(type_only=True).items()
        for target in targets
        if layer_of(target) > layer_of(name)
    )
    assert wrong == []


def test_the_runtime_imports_nothing_of_the_harness() -> None:
    wrong = sorted(
        f"{name} -> {target}"
        for name, targets in graph(type_only=True).items()
        if _within(name, "harness.runtime")
        for target in targets
        if not _within(target, "harness.runtime")
    )
    assert wrong == []


# The adapters' families (harness/adapters/__init__.py): each imports the layers below, the
# shared top of harness.adapters, and itself, never a sibling family. Of the shared top,
# only the package's face and the table from `--adapter NAME` to a member reach into them.
FAMILIES = (
    "harness.adapters.reference",
    "harness.adapters.process",
    "harness.adapters.clis",
    "harness.adapters.acp",
    "harness.adapters.frameworks",
)
INTO_FAMILIES = ("harness.adapters", "harness.adapters._load")


def family_of(module: str) -> str | None:
    return next((f for f in FAMILIES if _within(module, f)), None)


def test_a_family_never_imports_a_sibling_family() -> None:
    wrong = sorted(
        f"{name} -> {target}"
        for name, targets in graph(type_only=True).items()
        for target in targets
        if family_of(name) and family_of(target) not in (None, family_of(name))
    )
    assert wrong == []


def test_what_the_families_share_imports_none_of_them() -> None:
    wrong = sorted(
        f"{name} -> {target}"
        for name, targets in graph(type_only=True).items()
        if _within(name, "harness.adapters") and family_of(name) is None
        and name not in INTO_FAMILIES
        for target in targets
        if family_of(target) is not None
    )  # fmt: skip
    assert wrong == []


def test_every_adapter_module_is_a_familys_or_shared() -> None:
    # No CLI's or runtime's module at the top: the top holds what families share.
    top = sorted(m for m in graph() if m.startswith("harness.adapters.") and not family_of(m))
    assert top == [
        "harness.adapters._calls", "harness.adapters._expectations", "harness.adapters._foreign",
        "harness.adapters._handback",
        "harness.adapters._load",
        "harness.adapters._node", "harness.adapters._npm", "harness.adapters._offline",
        "harness.adapters._quiescence", "harness.adapters._qwen", "harness.adapters._reported",
        "harness.adapters._watchdog",
    ]  # fmt: skip


def test_the_layer_check_finds_an_import_upward() -> None:
    assert layer_of("harness.runtime.core") < layer_of("harness.run._judge")
    assert layer_of("harness.contract") < layer_of("harness.fake.script")
    assert layer_of("harness") == len(LAYERS) - 1


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
    assert imports("p.m", source, known, type_only=True) == known - {"p.m"}
