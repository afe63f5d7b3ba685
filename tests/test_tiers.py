"""The fast tier starts no process: a test outside the second tier that tries fails,
naming itself and where to mark it (tests/conftest.py). And no test outside the third
(`cli`) starts a real runtime, which a run leaves out unless it is named or selected."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.conftest import (
    RUNTIMES,
    StartedAProcess,
    StartedARuntime,
    no_processes,
    pytest_collection_modifyitems,
)


def test_this_first_tier_test_cannot_start_a_process() -> None:
    with pytest.raises(StartedAProcess) as got:
        subprocess.run([sys.executable, "-c", "pass"], check=False)
    message = str(got.value)
    assert message.startswith(
        "tests/test_tiers.py::test_this_first_tier_test_cannot_start_a_process started a process"
    )
    assert "add its module to SLOW_MODULES or the test to SLOW_TESTS" in message


def test_the_guard_names_the_test_and_covers_asyncio_subprocesses() -> None:
    async def spawn() -> None:
        await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")

    with no_processes("tests/x.py::t"), pytest.raises(StartedAProcess, match=r"^tests/x.py::t "):
        asyncio.run(spawn())


def test_the_guard_is_lifted_after_the_test() -> None:
    before = subprocess.Popen.__init__
    with no_processes("tests/x.py::t"):
        assert subprocess.Popen.__init__ is not before
    assert subprocess.Popen.__init__ is before


# -- the third tier: real runtimes, only under the `cli` marker -------------------------
RUNTIME = str(RUNTIMES / "claude-code" / "node_modules" / ".bin" / "claude")


@pytest.fixture
def tried_in_setup() -> BaseException | None:
    try:
        subprocess.run([RUNTIME, "--version"], check=False)
    except StartedARuntime as exc:
        return exc
    return None


@pytest.mark.slow  # it may start processes, just not a runtime
def test_a_test_without_the_cli_marker_cannot_start_a_runtime(
    tried_in_setup: BaseException | None,
) -> None:
    assert isinstance(tried_in_setup, StartedARuntime)  # in its setup
    with pytest.raises(StartedARuntime) as got:
        subprocess.run([RUNTIME, "--version"], check=False)
    message = str(got.value)
    assert message.startswith(
        "tests/test_tiers.py::test_a_test_without_the_cli_marker_cannot_start_a_runtime started "
    )
    assert "mark it @pytest.mark.cli, or read recorded output instead" in message
    with pytest.raises(StartedARuntime):  # npm installing one, in its folder
        subprocess.run(["true"], cwd=RUNTIMES / "qwen-code", check=False)
    npm: list[str | Path] = [Path("/usr/bin/npm"), "ci"]
    for node in (["node", "-e", "0"], npm, "npx --yes x"):
        with pytest.raises(StartedARuntime):  # Node anywhere (the Node SDKs' tests)
            subprocess.run(node, check=False, shell=isinstance(node, str))
    assert subprocess.run(["true"], check=False).returncode == 0  # anything else starts
    assert subprocess.run(["nodes-not"], check=False, shell=True).returncode != 0


class Item:
    """What the collection hook reads of a collected test."""

    def __init__(self, path: Path, *marks: str) -> None:
        self.path, self.nodeid = path, f"{path.name}::t"
        self.module: Any = None
        self.marks = set(marks)

    def get_closest_marker(self, name: str) -> object:
        return name if name in self.marks else None

    def add_marker(self, mark: pytest.MarkDecorator) -> None:
        self.marks.add(mark.name)


def collected(
    markexpr: str, args: list[str], items: list[Item], adapter: str | None = None
) -> tuple[list[Item], list[Item]]:
    """The items kept, and those left out, by tests/conftest.py's collection hook (with
    `--harness-adapter ADAPTER`, if given)."""
    left_out: list[Item] = []
    options = {"--harness-adapter": adapter}
    config = SimpleNamespace(
        option=SimpleNamespace(markexpr=markexpr),
        args=args,
        invocation_params=SimpleNamespace(dir=Path(__file__).parents[1]),
        getoption=lambda name, default=None: options.get(name, default),
        hook=SimpleNamespace(pytest_deselected=lambda items: left_out.extend(items)),
    )
    kept = list(items)
    pytest_collection_modifyitems(config, kept)  # type: ignore[arg-type]
    return kept, left_out


def test_the_cli_load_and_package_tests_are_left_out_unless_named_or_selected() -> None:
    here = Path(__file__).parent
    qwen, other = here / "clis" / "test_qwen_code.py", here / "test_tiers.py"
    wheel = here / "test_wheel.py"

    def run(markexpr: str, *args: str) -> tuple[list[Path], list[Path]]:
        items = [Item(qwen, "cli"), Item(qwen), Item(other, "load"), Item(other)]
        items.append(Item(wheel, "package"))
        kept, left_out = collected(markexpr, list(args), items)
        assert all("slow" in i.marks for i in kept + left_out if "cli" in i.marks)
        return [i.path for i in kept], [i.path for i in left_out]

    assert run("") == ([qwen, other], [qwen, other, wheel])  # `pytest -n auto`
    assert run("", "tests") == ([qwen, other], [qwen, other, wheel])  # a folder is no file
    assert run("", "tests/clis/test_qwen_code.py::test_x") == ([qwen, qwen, other], [other, wheel])
    assert run("", "tests/test_wheel.py") == ([qwen, other, wheel], [qwen, other])
    assert run("cli") == ([qwen, qwen, other, other, wheel], [])  # the expression decides


def test_the_scenario_tests_on_a_foreign_runtime_are_cli_tests_the_option_names() -> None:
    # `pytest --harness-adapter claude-code` drives the real CLI from test_scenarios: those
    # tests may start it (the guard lets `cli` tests), and the option asks for them.
    scenarios = Item(Path(__file__).parent / "test_scenarios.py")
    scenarios.module = SimpleNamespace(__name__="tests.test_scenarios")
    kept, left_out = collected("", [], [scenarios], adapter="claude-code")
    assert (kept, left_out) == ([scenarios], [])
    assert {"cli", "slow"} <= scenarios.marks
    plain = Item(Path(__file__).parent / "test_scenarios.py")
    plain.module = SimpleNamespace(__name__="tests.test_scenarios")
    collected("", [], [plain])
    assert plain.marks == set()  # on the reference: the inner loop, as ever
