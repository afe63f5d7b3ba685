"""Fuzz the scenario loader, the runner and the CLI with random and mutated documents.

The contract under test (anything else is a bug in the harness, never filtered away):

- `load_scenario(path)` returns a `Scenario` or raises `ScenarioError` whose `problems` is
  a non-empty list of single-line strings, each starting with the file's path; what it
  accepts satisfies the schema's name patterns as JSON Schema means them.
- `run_scenario(scenario, backstop=2.0)` returns a `Result` (it never raises) whose status
  is pass, fail or error and whose outcome is completed, error or hang, within the
  backstop; over SSE, whatever the delta size, the result is the one over JSON.
- `harness --scenarios DIR run` returns 0, 1, 2 or 3 (2 exactly when the file is invalid;
  4, "the harness itself broke", is a failure), never raises, never prints a traceback.

Documents come from: arbitrary bytes and text, with YAML-ish fragments (tags, anchors and
aliases, huge numbers, NaN and infinities, dates, duplicate keys, tabs, BOMs, deep
nesting), also spliced into the shipped scenarios' text; and 1-3 structural mutations of
the shipped scenarios (delete, replace, insert, swap, duplicate or drop a list item, rename
an agent, re-point a reference or a template), written under their own id so the semantic
checks behind the schema are reached. Minimal reproducers of what fuzzing found run as
plain tests (`test_found_*`), apart from the fuzz tests so those keep hunting.

A hang cannot be caught from inside the code that hangs, so every load and run is under a
watchdog (a timer thread that signals the main thread): a synchronous loop that never
yields to the event loop would defeat both the deadlock detector and the backstop.

Profiles, registered in tests/fuzzing.py (each fuzz test applies one itself, so other
test files keep their settings):

- `ci`, the default: derandomized, no example database, about 300 examples in all, so
  the file takes a few seconds and gives the same verdict on every run and machine.
- `explore`: many more random examples (some minutes), with the example database on
  (`.hypothesis/`, which replays earlier failures first); lift the per-test timeout:

      pytest tests/test_fuzz.py -p hypothesispytest --hypothesis-profile=explore --timeout=0

  A failure found there: add its minimal input to FOUND_* below.
"""

from __future__ import annotations

import io
import json
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.run import Result, Wire, run_scenario
from harness.scenario import Scenario, ScenarioError, load_scenario
from tests.fuzzing import (
    SCHEMA_ID,
    SCHEMA_LABEL,
    SCHEMA_NAME,
    SHIPPED,
    dump,
    mutants,
    nested,
    spliced,
    yamlish,
)

# Per test, a share of the profile's max_examples: the loader alone is cheap, a CLI run is
# not, and together they should stay within a few seconds under `ci`.
_SHARE = {"bytes": 1.0, "text": 1.5, "splice": 1.5, "mutants": 1.5, "cli": 0.4, "wires": 0.5}


def _fuzz(name: str, strategy: st.SearchStrategy[Any], check: Callable[[Any], None]) -> None:
    """Run `check` over `strategy` under the active profile (explore when asked for, ci
    otherwise), chosen at call time because `--hypothesis-profile` is applied after this
    module may have been imported."""
    chosen = "explore" if settings.get_current_profile_name() == "explore" else "ci"
    base = settings.get_profile(chosen)
    test = given(strategy)(check)
    examples = max(1, int(base.max_examples * _SHARE[name]))
    settings(base, max_examples=examples)(test)()


# -- the contract ---------------------------------------------------------------------
BACKSTOP = 2.0  # seconds: the runner's own wall-clock limit per scenario
# Generous on purpose: the runner is expected back within BACKSTOP, and a verdict must not
# depend on how loaded the machine is. Anything past this is a hang, not slowness.
LOAD_LIMIT = 10.0
RUN_LIMIT = BACKSTOP + 10.0
CLI_LIMIT = BACKSTOP + 15.0


class _Overdue(BaseException):
    """Raised by the watchdog. A BaseException, so the runner's `except Exception` (which
    turns a broken runtime into an `error` outcome) cannot swallow a hang."""


# SIGUSR2 from a timer thread, not SIGALRM: pytest-timeout (`timeout` in pyproject.toml)
# owns SIGALRM and its one timer per test, and must stay in force around these checks.
_CAN_INTERRUPT = hasattr(signal, "pthread_kill") and hasattr(signal, "SIGUSR2")
_armed: dict[str, str] = {}  # what the running watchdog guards; empty when none is armed


def _overdue(signum: int, frame: Any) -> None:
    # Installed once and never removed: a signal that lands just after its watchdog was
    # disarmed is ignored here, where restoring the default handler would kill the process.
    if _armed:
        raise _Overdue(_armed["what"])


@contextmanager
def _watchdog(seconds: float, what: str) -> Iterator[None]:
    if not _CAN_INTERRUPT or threading.current_thread() is not threading.main_thread():
        yield  # nothing can interrupt this thread; the backstop is then the only bound
        return
    if signal.getsignal(signal.SIGUSR2) is not _overdue:
        signal.signal(signal.SIGUSR2, _overdue)
    main_thread = threading.main_thread().ident
    assert main_thread is not None
    timer = threading.Timer(seconds, signal.pthread_kill, (main_thread, signal.SIGUSR2))
    timer.daemon = True
    _armed["what"] = what
    timer.start()
    try:
        yield
    except _Overdue as exc:
        # `from exc` keeps the traceback of where it was stuck: that is the bug report.
        raise AssertionError(f"hang: {what} still running after {seconds:g} s") from exc
    finally:
        _armed.clear()
        timer.cancel()


def load_checked(path: Path) -> Scenario | None:
    """Load `path`; None when the loader rejected it as the contract says it must."""
    try:
        with _watchdog(LOAD_LIMIT, f"load_scenario({path.name})"):
            scenario = load_scenario(path)
    except ScenarioError as exc:
        problems = exc.problems
        assert isinstance(problems, list) and problems, "ScenarioError without problems"
        for problem in problems:
            assert isinstance(problem, str), f"problem is not a string: {problem!r}"
            assert problem.startswith(f"{path}:"), f"problem does not name the file: {problem!r}"
            assert "\n" not in problem and "\r" not in problem, f"multi-line problem: {problem!r}"
        return None
    # What was accepted is what the schema allows: names end up in file names and headers.
    assert SCHEMA_ID.fullmatch(scenario.id), f"accepted id {scenario.id!r}"
    for name, agent in scenario.agents.items():
        assert SCHEMA_NAME.fullmatch(name), f"accepted agent name {name!r}"
        for call in (c for turn in agent.script for c in turn.calls):
            if call.label is not None:
                assert SCHEMA_LABEL.fullmatch(call.label), f"accepted label {call.label!r}"
            # JSON-compatible YAML: arguments the fake must send as JSON text.
            try:
                json.dumps(call.args, allow_nan=False)
            except ValueError as exc:
                raise AssertionError(f"accepted non-JSON args {call.args!r}: {exc}") from exc
    return scenario


def run_checked(scenario: Scenario, wire: Wire = Wire()) -> Result:
    started = time.monotonic()
    with _watchdog(RUN_LIMIT, f"run_scenario({scenario.id})"):
        result = run_scenario(scenario, backstop=BACKSTOP, wire=wire)
    took = time.monotonic() - started
    assert isinstance(result, Result), f"run_scenario returned {type(result).__name__}"
    assert result.status in {"pass", "fail", "error"}, result.status
    assert result.observation.outcome in {"completed", "error", "hang"}, result.observation
    # The backstop cancels at BACKSTOP; the rest is teardown and observing, milliseconds.
    assert took < BACKSTOP + 5.0, f"run_scenario took {took:.1f} s with a {BACKSTOP:g} s backstop"
    return result


def load_and_run(path: Path, wire: Wire = Wire()) -> bool:
    """Whether the file loaded (and so was run)."""
    scenario = load_checked(path)
    if scenario is not None:
        run_checked(scenario, wire)
    return scenario is not None


WIRES = [Wire(), Wire(stream=True), Wire(stream=True, chunk=1)]


# -- what fuzzing found ---------------------------------------------------------------
# Minimal reproducers of failures the fuzzer found, run as plain tests on every run (so a
# fixed bug stays fixed whatever the random examples happen to be), apart from the fuzz
# tests (so a known bug does not stop them hunting for the next one).
_CASE = """id: case
title: t
covers: [D1]
features: [assembled]
agents:
{agents}
phases: [{{start: lead, prompt: go}}]
expect: {{outcome: completed, answerer_calls: 0}}
"""
FOUND_TEXT = [
    # An unknown key with a line break went raw into the JSON pointer of its problem.
    pytest.param('"\\n": 0\n', id="newline-in-unknown-key"),
    # Schema patterns end in `$`, which Python's re (so jsonschema) also matches before a
    # final newline: "lead\n" is accepted as an agent name, and becomes a session file name
    # and an X-Harness-Agent header value with a line break in it.
    pytest.param(
        _CASE.replace("start: lead", 'start: "lead\\n"').format(
            agents='  "lead\\n": {script: [{say: hi}]}'
        ),
        id="newline-ended-agent-name",
    ),
    # A template with a line break inside its braces was quoted raw in its problem.
    pytest.param(
        _CASE.format(agents='  lead: {script: [{say: "{{a\\nb}}"}]}'), id="newline-in-template"
    ),
    # A label with a final newline (the same `$`) was listed raw in another problem.
    pytest.param(
        _CASE.format(
            agents="  lead:\n    script:\n"
            '      - {call: ask_user_question, as: "q\\n", args: {questions: [{id: q}]}}\n'
            '      - say: "{{r.result}}"'
        ),
        id="newline-ended-label",
    ),
    # 1e400 is a decimal number to the YAML 1.2 resolver and overflows to inf, which the
    # README says is refused; the fake then sends `Infinity`, which is not JSON.
    pytest.param(
        _CASE.format(agents="  lead: {script: [{call: subagent, args: {n: 1e400}}, {say: hi}]}"),
        id="overflowing-number-in-args",
    ),
    # The session log is JSONL written with ensure_ascii=False, so U+2028 (or \x85, \x1c...)
    # stays raw in a line, and reading it back with str.splitlines() cuts that line in two:
    # run_scenario raises JSONDecodeError, and `harness run` exits 4.
    pytest.param(
        _CASE.replace("prompt: go", 'prompt: "\\u2028"').format(
            agents="  lead: {script: [{say: hi}]}"
        ),
        id="line-separator-in-session-log",
    ),
]
MUST_RUN = {"line-separator-in-session-log"}
FOUND_WIRES = [
    # stream_chunk: 2.0 is an integer to JSON Schema; over SSE the fake slices by it.
    pytest.param(
        (
            ("zero-depth-live-child", {**SHIPPED["zero-depth-live-child"], "stream_chunk": 2.0}),
            Wire(stream=True),
        ),
        id="float-stream-chunk",
    ),
]


# -- the checks -----------------------------------------------------------------------
def check_bytes(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "case.yaml"
        path.write_bytes(data)
        load_and_run(path)


def check_text(text: str, stem: str = "case", wire: Wire = Wire()) -> None:
    loads_and_runs(text, stem, wire)


def loads_and_runs(text: str, stem: str = "case", wire: Wire = Wire()) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{stem}.yaml"
        path.write_text(text, encoding="utf-8")
        return load_and_run(path, wire)


def check_mutant(case: tuple[tuple[str, Any], Wire]) -> None:
    (name, doc), wire = case
    check_text(dump(doc), name, wire)


def check_cli(case: tuple[str, Any]) -> None:
    name, doc = case
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}.yaml"
        path.write_text(dump(doc), encoding="utf-8")
        valid = load_checked(path) is not None
        # Like a UTF-8 terminal: stdout is strict, stderr escapes what it cannot encode.
        out_bytes, err_bytes = io.BytesIO(), io.BytesIO()
        out = io.TextIOWrapper(out_bytes, encoding="utf-8", write_through=True)
        err = io.TextIOWrapper(
            err_bytes, encoding="utf-8", errors="backslashreplace", write_through=True
        )
        argv = ["--scenarios", tmp, "run", "--backstop", str(BACKSTOP)]
        with _watchdog(CLI_LIMIT, "harness run"), redirect_stdout(out), redirect_stderr(err):
            code = main(argv)
        stderr = err_bytes.getvalue().decode("utf-8")
        # 4 is the CLI owning up to a bug in the harness: a failure here like any other.
        assert type(code) is int and code in {0, 1, 2, 3}, (code, stderr)
        assert "Traceback" not in stderr, stderr
        # 2 is bad input: exactly when the loader rejects the file.
        assert (code == 2) == (not valid), (code, stderr)


def check_wires(case: tuple[tuple[str, Any], Wire]) -> None:
    (name, doc), wire = case
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}.yaml"
        path.write_text(dump(doc), encoding="utf-8")
        scenario = load_checked(path)
        if scenario is None:
            return
        plain = run_checked(scenario).to_json()
        streamed = run_checked(scenario, wire).to_json()
        differ = {
            key: (plain.get(key), streamed.get(key))
            for key in sorted({*plain, *streamed} - {"observed"})
            if plain.get(key) != streamed.get(key)
        }
        differ |= {
            f"observed.{key}": (plain["observed"].get(key), streamed["observed"].get(key))
            for key in sorted({*plain["observed"], *streamed["observed"]})
            if plain["observed"].get(key) != streamed["observed"].get(key)
        }
        assert not differ, f"{wire.describe()} differs from json: {differ}"


# -- the tests ------------------------------------------------------------------------
def test_loader_survives_arbitrary_bytes() -> None:
    # Arbitrary bytes, and text in the encodings a file might really arrive in.
    encoded = st.tuples(
        yamlish | st.text(max_size=80), st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "latin-1"])
    ).map(lambda p: p[0].encode(p[1], errors="replace"))
    _fuzz("bytes", st.binary(max_size=300) | encoded, check_bytes)


def test_loader_survives_yamlish_text() -> None:
    _fuzz("text", yamlish | nested | st.text(max_size=200), lambda text: check_text(text))


def test_loader_and_runner_survive_spliced_scenarios() -> None:
    _fuzz("splice", spliced(), lambda case: check_text(case[1], case[0]))


def test_loader_and_runner_survive_mutated_scenarios() -> None:
    _fuzz("mutants", st.tuples(mutants(), st.sampled_from(WIRES)), check_mutant)


def test_cli_survives_mutated_scenarios() -> None:
    _fuzz("cli", mutants(), check_cli)


def test_streaming_changes_nothing_in_mutated_scenarios() -> None:
    """The README's promise, for any scenario the loader accepts: the observation over SSE,
    whatever the delta size, is the one over plain JSON."""
    _fuzz("wires", st.tuples(mutants(), st.sampled_from(WIRES[1:])), check_wires)


@pytest.mark.parametrize("text", FOUND_TEXT)
def test_found_reproducers(request: pytest.FixtureRequest, text: str) -> None:
    loaded = loads_and_runs(text)
    # These must reach the runner, or they stop testing what they were found for.
    if request.node.callspec.id in MUST_RUN:
        assert loaded, "the reproducer no longer loads, so it no longer reaches the runner"


@pytest.mark.parametrize("case", FOUND_WIRES)
def test_found_wire_reproducers(case: tuple[tuple[str, Any], Wire]) -> None:
    check_wires(case)
