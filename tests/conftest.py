from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.run import Wire
from harness.scenario import Scenario, load_all
from tests.serving import Served
from tests.serving import serve_process as start_serving

# Suite-wide guarantees, each its own plugin: one bytecode cache for the processes a run
# starts, no socket off loopback, shuffled order on demand.
pytest_plugins = ["tests._bytecode", "tests._offline", "tests._order", "tests.clis._shared"]

SCENARIOS = {s.id: s for s in load_all()}

# The second tier, marked `slow`: modules (and single tests) that start processes (the CLI
# as a subprocess, `harness serve`, Node, Chromium, inner pytest sessions) or run for
# seconds (the fuzzers, the 1,000-deep chain, the benchmarks' smoke run). Any other test
# that starts a process fails (no_processes). `pytest -m "not slow"` is the inner loop; the
# README's `pytest -n auto` runs both tiers, and so does CI.
#
# Three groups of the second tier run on their own, each left out of a run that names neither
# their files nor a marker expression (`pytest -n auto`), and run by CI in a step of its
# own (LEFT_OUT):
# - `cli`, marked per test: tests that start Node: a real runtime installed under adapters/
#   (an agent CLI, upstream's dsh), npm installing one, or the official Node SDKs
#   (tests/test_serve_sdks.py); CI's matrix step runs every runtime's cells already.
#   `pytest -m cli` runs them. A test without the marker that starts node, npm or anything
#   under adapters/ fails (no_runtimes), in its setup as in its call. Those that run a CLI's
#   whole corpus are `corpus` too: CI's cli step leaves them to its matrix step.
# - `load`: checks that load the machine or measure it, meant to run alone: `harness serve`
#   under load and abuse (tests/test_serve_load.py) and the benchmark suite's quick run
#   (tests/test_benchmarks.py). `pytest -m load`.
# - `package`: the sdist and wheel built from the checkout and installed in a fresh venv
#   (tests/test_wheel.py), which CI runs with the `cli` tests: `pytest -m package`.
SLOW_MODULES = frozenset({
    "test_acp_host", "test_adapter_faults", "test_adapters", "test_benchmarks",
    "test_openai_agents", "test_deepagents", "test_google_adk", "test_pydantic_ai",
    "test_smolagents", "test_known_failures",
    "test_claude_code", "test_codex",
    "test_deep", "test_determinism",
    "test_dialects_served", "test_fuzz",
    "test_hygiene", "test_matrix", "test_node_dsh", "test_offline", "test_opencode",
    "test_qwen_code",
    "test_report", "test_serve",
    "test_serve_load", "test_serve_sdks", "test_wheel", "test_plugin",
})  # fmt: skip
# Single tests of otherwise in-process modules that start a process or run for seconds (node
# ids past tests/).
SLOW_TESTS = frozenset({
    "test_goldens.py::test_every_gating_run_fails_without_a_golden[other-adapter]",
    *(f"test_schema.py::test_the_deciding_validator_agrees_with_the_explaining_one[{s}]"
      for s in ("child-aborted-call", "service-zero-depth-live-child",
                "parallel-children-refused")),
})  # fmt: skip


class StartedAProcess(AssertionError):
    """A test outside the second tier started a process."""


@contextlib.contextmanager
def no_processes(test: str) -> Iterator[None]:
    """While a first-tier test runs, subprocess.Popen (asyncio's subprocesses included)
    refuses to start anything: the tier starts no process, by construction."""
    real = subprocess.Popen.__init__

    def refuse(self: subprocess.Popen[Any], args: Any, *rest: Any, **kw: Any) -> None:
        raise StartedAProcess(
            f"{test} started a process ({args!r:.80}), but it is in the fast tier, which starts "
            "none; add its module to SLOW_MODULES or the test to SLOW_TESTS in tests/conftest.py"
        )

    subprocess.Popen.__init__ = refuse  # type: ignore[method-assign]
    try:
        yield
    finally:
        subprocess.Popen.__init__ = real  # type: ignore[method-assign]


RUNTIMES = Path(__file__).resolve().parents[1] / "adapters"


NODE = frozenset({"node", "npm", "npx"})


class StartedARuntime(AssertionError):
    """A test without the `cli` marker started Node or a runtime installed under adapters/."""


def _under_runtimes(word: object) -> bool:
    text = os.fsdecode(word) if isinstance(word, (str, bytes, os.PathLike)) else ""
    return text == str(RUNTIMES) or (str(RUNTIMES) + os.sep) in text


def _program(args: Any) -> str:
    """The program a Popen call starts: its args' first word (a shell line's too)."""
    if isinstance(args, (str, bytes, os.PathLike)):
        words = os.fsdecode(args).split()
        return words[0] if words else ""
    first = next(iter(args), "")
    return os.fsdecode(first) if isinstance(first, (str, bytes, os.PathLike)) else ""


@contextlib.contextmanager
def no_runtimes(test: str) -> Iterator[None]:
    """While a test without the `cli` marker is set up or runs, no process may start from
    or in adapters/ (a CLI, dsh, npm installing either), and no node or npm at all, so the
    default run starts no Node."""
    real = subprocess.Popen.__init__

    def refuse(self: subprocess.Popen[Any], args: Any, *rest: Any, **kw: Any) -> None:
        words = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args)
        if os.path.basename(_program(args)) in NODE or any(
            _under_runtimes(w) for w in [*words, kw.get("cwd")]
        ):
            raise StartedARuntime(
                f"{test} started {args!r:.120} (Node, or a runtime under adapters/) without "
                "the `cli` marker; mark it @pytest.mark.cli, or read recorded output instead "
                "(tests/fixtures/cli-output)"
            )
        real(self, args, *rest, **kw)

    subprocess.Popen.__init__ = refuse  # type: ignore[method-assign]
    try:
        yield
    finally:
        subprocess.Popen.__init__ = real  # type: ignore[method-assign]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, object, object]:
    if item.get_closest_marker("cli") is not None:
        return (yield)
    with no_runtimes(item.nodeid):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    if item.get_closest_marker("cli") is not None:
        return (yield)
    with no_runtimes(item.nodeid):
        if item.get_closest_marker("slow") is not None:
            return (yield)
        with no_processes(item.nodeid):
            return (yield)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    # The fuzz profiles must exist before hypothesis applies --hypothesis-profile, in its
    # own pytest_configure. Only then is hypothesis imported at start-up: test_fuzz.py
    # imports the profiles itself, and the inner loop never imports hypothesis at all.
    if config.getoption("--hypothesis-profile", None):
        import tests.fuzzing  # noqa: F401


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    # Under exactly `-m "not slow"` a slow module's tests are all deselected anyway, so the
    # module is not even imported: importing them (hypothesis among them) cost the inner
    # loop about 0.6 s of start-up per process.
    if collection_path.stem in SLOW_MODULES and config.option.markexpr.strip() == "not slow":
        return True
    return None


LEFT_OUT = ("cli", "load", "package")  # markers whose tests run only when named or selected


def pytest_report_header(config: pytest.Config) -> str | None:
    if config.option.markexpr.strip():
        return None
    return (
        "left out unless named or selected: Node, the agent CLIs and dsh (`pytest -m cli`), "
        "serve under load and the benchmarks' quick run (`pytest -m load`), the built "
        "package (`pytest -m package`)"
    )


def _named(config: pytest.Config) -> set[Path]:
    """The test files named on the command line (alone or in a node id), not directories."""
    here = config.invocation_params.dir
    named = (here / str(arg).split("::")[0] for arg in config.args)
    return {p.resolve() for p in named if p.is_file()}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Without a marker expression, the LEFT_OUT tests of files not named are left out.
    wanted = _named(config) if not config.option.markexpr.strip() else None
    # A foreign runtime under test (--harness-adapter) runs as processes, a real CLI's
    # among them: the scenario tests it drives are of the `cli` tier then, and named by
    # the option itself, so never left out.
    foreign = config.getoption("--harness-adapter", None) not in (None, "reference")
    left_out = []
    for item in items:
        module = getattr(item, "module", None)
        if foreign and module is not None and module.__name__.endswith("test_scenarios"):
            item.add_marker(pytest.mark.cli)
            item.add_marker(pytest.mark.slow)
            continue
        if item.get_closest_marker("cli") is not None:
            item.add_marker(pytest.mark.slow)
        if (
            wanted is not None
            and any(item.get_closest_marker(m) is not None for m in LEFT_OUT)
            and item.path.resolve() not in wanted
        ):
            left_out.append(item)
            continue
        in_slow_module = module is not None and module.__name__.rpartition(".")[2] in SLOW_MODULES
        if in_slow_module or item.nodeid.rpartition("/")[2] in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        gone = {id(i) for i in left_out}
        items[:] = [i for i in items if id(i) not in gone]


# Every scenario runs over each wire and must give the same observation and snapshot: JSON
# or SSE deltas of every size, and requests routed by X-Harness-Agent, by a session header
# alone, or by nothing but the conversation (what a real runtime sends).
WIRES = [
    Wire(),
    Wire(stream=True),
    Wire(stream=True, chunk=7),
    Wire(stream=True, chunk=1),
    Wire(routing="session"),
    Wire(stream=True, chunk=1, routing="content"),
]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "scenario_id" in metafunc.fixturenames:
        metafunc.parametrize("scenario_id", sorted(SCENARIOS))
    if "wire" in metafunc.fixturenames:
        metafunc.parametrize("wire", WIRES, ids=[w.describe() for w in WIRES])


@pytest.fixture
def scenario(scenario_id: str) -> Scenario:
    return SCENARIOS[scenario_id]


@pytest.fixture
def serve_process(tmp_path: Path) -> Callable[..., contextlib.AbstractContextManager[Served]]:
    """`serve_process(SCENARIO_ID, *OPTIONS, scenarios=DIR)`: `harness serve` as a process,
    as a context manager yielding its Served (url, stderr(), wait()); stderr kept in tmp_path."""

    def serve(
        scenario_id: str, *options: str, scenarios: Path | None = None
    ) -> contextlib.AbstractContextManager[Served]:
        return start_serving(scenario_id, *options, log_dir=tmp_path, scenarios=scenarios)

    return serve
