"""The reference runtime carries no test seam: it names no fault, no harness guard, no
answerer attribute and no harness header, and reads nothing off the objects it is handed
beyond what its own protocols declare. (tests/test_layers.py proves it imports nothing of
the harness; this proves the harness left nothing of itself inside it either.)

The faults and guards are composed around it from outside, in
harness/adapters/reference/ (faults.py, guards.py).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from harness.adapters.reference import answerers
from harness.adapters.reference.guards import GUARDS, RUNTIME_OWNERSHIP
from harness.contract import AGENT_HEADER, SESSION_HEADER

ROOT = Path(__file__).parents[1]
RUNTIME = ROOT / "harness" / "runtime"

# Words for the harness's test seams: none may be part of a name in the runtime's code.
SEAM_WORDS = frozenset({
    "fault", "faults", "variant", "variants", "mutant", "mutants", "guards",
    "scenario", "scenarios", "harness",
})  # fmt: skip
# Ways to read what an object's type does not declare.
# (type() only of a provider: the runtime names a JSON value's type in an error message.)
PEEKS = frozenset({"getattr", "hasattr", "vars"})
DUNDER_PEEKS = frozenset({"__dict__", "__class__"})
# What the harness's answerers are called in the hang graphs ("tripwire answerer").
ANSWERER_KINDS = frozenset(
    kind
    for cls in vars(answerers).values()
    if isinstance(cls, type) and isinstance(kind := vars(cls).get("kind"), str)
)
HARNESS_STRINGS = (
    AGENT_HEADER.lower(),
    SESSION_HEADER.lower(),
    "x-harness",
    *(f"{kind} answerer" for kind in ANSWERER_KINDS),
    # The test-only guards' names ("delegation-depth"; "none" is too common a word).
    *(name for name in GUARDS if "-" in name and name != RUNTIME_OWNERSHIP.name),
)


def _names(node: ast.AST) -> Iterator[str]:
    """The identifiers a node introduces or reads."""
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, ast.Attribute):
        yield node.attr
    elif isinstance(node, ast.arg):
        yield node.arg
    elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        yield node.name
    elif isinstance(node, ast.alias):
        yield node.asname or node.name
    elif isinstance(node, ast.keyword):
        yield from [node.arg] if node.arg is not None else []


def _words(name: str) -> set[str]:
    """`NO_FAULTS` -> {"no", "faults"}; `DelegationDepthGuard` -> {"delegation", ...}."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    return {w.lower() for w in spaced.split("_") if w}


def _dotted(node: ast.expr) -> str:
    return ast.unparse(node)


def findings(source: str, where: str) -> list[str]:
    """What in `source` would be the harness living inside the runtime."""
    out = []
    for node in ast.walk(ast.parse(source)):
        line = f"{where}:{getattr(node, 'lineno', '?')}"
        out += [f"{line}: names {n!r}" for n in _names(node) if _words(n) & SEAM_WORDS]
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value.lower()
            out += [f"{line}: says {s!r}" for s in HARNESS_STRINGS if s in text]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            of = _dotted(node.args[0]).split(".")[-1] if node.args else ""
            if node.func.id in PEEKS or (node.func.id == "type" and of == "provider"):
                out.append(f"{line}: peeks with {node.func.id}()")
        if isinstance(node, ast.Attribute) and node.attr in DUNDER_PEEKS:
            out.append(f"{line}: peeks at {node.attr}")
        # A provider (an Answerer) declares answer() and nothing else.
        if (
            isinstance(node, ast.Attribute)
            and _dotted(node.value).split(".")[-1] == "provider"
            and node.attr != "answer"
        ):
            out.append(f"{line}: reads {_dotted(node)} off the provider")
        # "kind" is an Intent's field ("plan-review"), read off an intent only.
        if (
            isinstance(node, ast.Attribute)
            and node.attr == "kind"
            and _dotted(node.value).split(".")[-1] != "intent"
        ):
            out.append(f"{line}: reads {_dotted(node)}")
    return out


def runtime_sources() -> dict[str, str]:
    return {str(p.relative_to(ROOT)): p.read_text("utf-8") for p in sorted(RUNTIME.rglob("*.py"))}


def test_the_runtime_has_no_fault_module() -> None:
    assert not (RUNTIME / "faults.py").exists()
    assert "harness/runtime/faults.py" not in runtime_sources()


def test_the_runtime_names_no_fault_guard_answerer_attribute_or_harness_header() -> None:
    found = [f for where, text in runtime_sources().items() for f in findings(text, where)]
    assert found == []


def test_the_scan_finds_each_seam_it_looks_for() -> None:
    seams = (
        "from harness.runtime.faults import NO_FAULTS\n"
        "def execute(rt, agent, call):\n"
        "    signal = AbortSignal(aborted=rt.faults.aborted(agent, call.name))\n"
        "    agent = ctx.runtime.faults.caller(ctx.agent, tool)\n"
        "    label = f\"{getattr(provider, 'kind', type(provider).__name__)} answerer\"\n"
        "    label = questions.provider.kind\n"
        "AGENT_HEADER = 'X-Harness-Agent'\n"
        "LABEL = 'tripwire answerer'\n"
        "class DelegationDepthGuards: pass\n"
        "NAME = 'delegation-depth'\n"
    )
    found = "\n".join(findings(seams, "m.py"))
    for expected in (
        "names 'faults'",
        "names 'NO_FAULTS'",
        "peeks with getattr()",
        "peeks with type()",
        "reads questions.provider.kind off the provider",
        "says 'x-harness-agent'",
        "says 'tripwire answerer'",
        "says 'delegation-depth'",
        "names 'DelegationDepthGuards'",
    ):
        assert expected in found, expected
    # The runtime's own words pass: its caller guard, an intent's kind, the service's use
    # of its provider.
    own = (
        "def check_caller(agents, agent): pass\n"
        "text = f'declares intent {intent.kind}'\n"
        "async def dispatch(self, request):\n"
        "    return await self.provider.answer(request)\n"
    )
    assert findings(own, "m.py") == []


def test_every_registry_method_has_a_caller_outside_the_tests() -> None:
    # A method only tests call is a seam by another name: the tests use what the runtime
    # and its adapter use.
    from harness.runtime.registry import AgentRegistry

    callers = "\n".join(
        p.read_text("utf-8")
        for p in (ROOT / "harness").rglob("*.py")
        if p != RUNTIME / "registry.py"
    )
    methods = [n for n in vars(AgentRegistry) if not n.startswith("_")]
    assert methods
    assert [m for m in methods if f".{m}(" not in callers] == []
