"""scenarios/protocol.json, the JSON-lines protocol's normative schema: every line an
adapter sends is checked against it, refused in one line naming the message, the field and
the problem; every line the harness sends validates against it too, and so does the example
in scenarios/INTERPRETING.md, so the document, the code and the prose cannot drift apart.

No process: the adapter's process is a fake with the same pipes (first tier).
"""

from __future__ import annotations

import copy
import json
import queue
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

import jsonschema
import pytest

from harness._paths import protocol_path
from harness.adapters import JsonLinesAdapter, RunOptions
from harness.adapters._reported import ProtocolError, check, validator
from harness.run import run_scenario
from harness.scenario import FEATURES, scenarios_version
from tests.conftest import SCENARIOS

ROOT = Path(__file__).parents[2]
SERVICE = "service-zero-depth-live-child"
ASSEMBLED = "delegated-question-handoff"
REQUIRED = ("outcome", "answerer_calls", "asked", "direct", "tool_errors", "handoffs", "final",
            "plan_mode")  # fmt: skip
# What the reference reports for SERVICE (its golden snapshot, in the protocol's terms).
DELEGATED = {"name": "UserQuestionError", "code": "DELEGATED_CALLER", "message": (
    "human interaction is unavailable while the calling agent is owned by another live agent; "
    "include the unresolved question or decision in the child agent's final result")}  # fmt: skip
OBSERVED: dict[str, Any] = {
    "outcome": "completed", "error": None, "answerer_calls": 0, "asked": [],
    "direct": [{"caller": "child", "answers": None, "error": DELEGATED}],
    "tool_errors": [], "handoffs": [], "final": {}, "plan_mode": {},
}  # fmt: skip


def result(**observation: Any) -> dict[str, Any]:
    return {"type": "result", "id": SERVICE, "observation": {**OBSERVED, **observation}}


def refusal(line: Any, label: str = f"result for {SERVICE}") -> str:
    with pytest.raises(ProtocolError) as info:
        check(line, label)
    return str(info.value)


@pytest.fixture(autouse=True)
def in_the_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # messages name the schema relative to the working directory


def test_the_schema_is_a_valid_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(json.loads(protocol_path().read_text("utf-8")))


def test_the_reference_observation_is_accepted() -> None:
    assert check(result(), "result") == result()


@pytest.mark.parametrize("field", REQUIRED)
def test_every_field_of_an_observation_is_required(field: str) -> None:
    line = result()
    del line["observation"][field]
    assert refusal(line) == (
        f"result for {SERVICE}: observation: missing '{field}' (scenarios/protocol.json)"
    )


def test_fields_left_out_together_are_named_together() -> None:
    # The report that passed service-zero-depth-live-child before: outcome and direct alone.
    line = {"type": "result", "id": SERVICE,
            "observation": {"outcome": "completed", "direct": OBSERVED["direct"]}}  # fmt: skip
    assert refusal(line) == (
        f"result for {SERVICE}: observation: missing 'answerer_calls', 'asked', 'tool_errors', "
        "'handoffs', 'final', 'plan_mode' (scenarios/protocol.json)"
    )


@pytest.mark.parametrize(
    ("observation", "problem"),
    [
        # JSON types are exact: true is not 1, "1" is not 1, 1.0 is not 1.
        ({"answerer_calls": True}, "observation.answerer_calls: expected an integer, got true"),
        ({"answerer_calls": 1.0}, "observation.answerer_calls: expected an integer, got 1.0"),
        ({"answerer_calls": "1"}, 'observation.answerer_calls: expected an integer, got "1"'),
        ({"answerer_calls": 1.5}, "observation.answerer_calls: expected an integer, got 1.5"),
        ({"answerer_calls": -1}, "observation.answerer_calls: expected at least 0, got -1"),
        ({"outcome": "done"},
         'observation.outcome: expected one of completed, error, hang, got "done"'),
        ({"asked": {}}, "observation.asked: expected a list, got {}"),
        ({"asked": [{"caller": 7, "questions": []}]},
         "observation.asked[0].caller: expected a string or null, got 7"),
        ({"asked": [{"caller": None, "questions": [{"question": "Why?"}]}]},
         "observation.asked[0].questions[0]: missing 'id'"),
        ({"direct": None}, "observation.direct: expected a list, got null"),
        ({"direct": [{"caller": "child", "answers": None, "error": None}]},
         "observation.direct[0].answers: expected a list of answers, or an error, got null"),
        ({"direct": [{"caller": "child", "answers": [], "error": DELEGATED}]},
         "observation.direct[0].answers: expected null beside an error, got []"),
        ({"direct": [{"caller": "child", "answers": None, "error": {**DELEGATED, "code": 3}}]},
         "observation.direct[0].error.code: expected a string, got 3"),
        ({"direct": [{"caller": "child", "answers": [{"id": "q", "selected": "Yes"}],
                      "error": None}]},
         'observation.direct[0].answers[0].selected: expected a list, got "Yes"'),
        ({"tool_errors": [{"agent": "child", "tool": "ask_user_question", "code": "X"}]},
         "observation.tool_errors[0]: missing 'name', 'text'"),
        ({"handoffs": [{"parent": "p", "child": "c", "child_final": 1, "tool_result": ""}]},
         "observation.handoffs[0].child_final: expected a string or null, got 1"),
        ({"final": {"session-1": 3}},
         "observation.final.session-1: expected a string or null, got 3"),
        ({"plan_mode": {"child": "yes"}},
         'observation.plan_mode.child: expected a boolean, got "yes"'),
        ({"answerer_call": 0}, "observation: unknown field 'answerer_call'"),
    ],
)  # fmt: skip
def test_a_wrong_field_is_named_with_what_is_wrong(
    observation: dict[str, Any], problem: str
) -> None:
    assert refusal(result(**observation)) == (
        f"result for {SERVICE}: {problem} (scenarios/protocol.json)"
    )


def test_an_outcome_other_than_completed_must_say_why() -> None:
    line = result(outcome="hang")
    del line["observation"]["error"]
    assert refusal(line) == (
        f"result for {SERVICE}: observation: missing 'error' (required unless the outcome is "
        "completed) (scenarios/protocol.json)"
    )
    assert "observation.error: expected a non-empty string saying why" in refusal(
        result(outcome="hang", error="")
    )
    assert "observation.error: expected null when the outcome is completed, got" in refusal(
        result(error="the answerer was reached")
    )
    assert check(result(outcome="hang", error="reached"), "result")  # said, it is accepted


@pytest.mark.parametrize(
    ("line", "label", "problem"),
    [
        ({"type": "hello", "protocol": 2, "features": []}, "hello", "protocol: expected 1, got 2"),
        ({"type": "hello", "protocol": 1}, "hello", "missing 'features'"),
        ({"type": "hello", "protocol": 1, "features": [], "session_header": "a b"}, "hello",
         'session_header: expected a header name (an HTTP token) or null, got "a b"'),
        ({"type": "skip", "id": SERVICE}, f"skip for {SERVICE}", "missing 'reason'"),
        ({"type": "done", "id": SERVICE}, f"reply to {SERVICE}",
         'type: expected one of hello, result, skip, error, got "done"'),
        ([1, 2], f"reply to {SERVICE}", "expected an object, got [1, 2]"),
    ],
)  # fmt: skip
def test_every_line_from_an_adapter_is_checked(line: Any, label: str, problem: str) -> None:
    assert refusal(line, label) == f"{label}: {problem} (scenarios/protocol.json)"


def test_the_example_in_interpreting_md_is_a_valid_observation() -> None:
    text = (ROOT / "scenarios" / "INTERPRETING.md").read_text("utf-8")
    section = text[text.index("## The JSON-lines adapter protocol") :]
    example = re.search(r"\*\*The observation\*\*.*?```json\n(.*?)```", section, re.DOTALL)
    assert example is not None, "the protocol section lost its example observation"
    observation = json.loads(example[1])
    assert sorted(observation) == sorted([*REQUIRED, "error"])
    assert list(validator("observation").iter_errors(observation)) == []


# -- what the harness sends ----------------------------------------------------------------
class FakeAdapterProcess:
    """Stands in for subprocess.Popen: records every line the harness writes to stdin and
    answers as a well-behaved adapter would, reporting `observation` for every run."""

    observation: ClassVar[dict[str, Any]] = {**OBSERVED, "direct": []}

    def __init__(self, command: list[str], **_: Any) -> None:
        self.sent: list[Any] = []
        self._out: queue.Queue[str | None] = queue.Queue()
        self._buffer = ""
        self.returncode: int | None = None
        self.stdin, self.stdout, self.stderr = self, iter(self._out.get, None), iter(())
        STARTED.append(self)

    # stdin
    def write(self, text: str) -> int:
        self._buffer += text
        while "\n" in self._buffer:
            line, self._buffer = self._buffer.split("\n", 1)
            self._answer(json.loads(line))
        return len(text)

    def flush(self) -> None: ...

    def close(self) -> None:
        self._end()

    def _answer(self, line: dict[str, Any]) -> None:
        self.sent.append(line)
        if line["type"] == "hello":
            self._reply({"type": "hello", "protocol": 1, "adapter": "fake",
                         "features": sorted(FEATURES),
                         "session_header": "x-fake-session"})  # fmt: skip
        elif line["type"] == "run":
            observation = copy.deepcopy(self.observation)
            self._reply({"type": "result", "id": line["id"], "observation": observation})
        elif line["type"] == "bye":
            self._end()

    def _reply(self, line: dict[str, Any]) -> None:
        self._out.put(json.dumps(line) + "\n")

    def _end(self) -> None:
        if self.returncode is None:
            self.returncode = 0
            self._out.put(None)

    # the process
    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            raise subprocess.TimeoutExpired("fake", timeout or 0)
        return self.returncode

    def kill(self) -> None:
        self._end()


STARTED: list[FakeAdapterProcess] = []


@pytest.fixture
def faked(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[FakeAdapterProcess]]:
    # The module's own name for subprocess, not subprocess.Popen itself, which the first
    # tier's guard (tests/conftest.py) refuses to call.
    fake = SimpleNamespace(Popen=FakeAdapterProcess, PIPE=subprocess.PIPE,
                           TimeoutExpired=subprocess.TimeoutExpired)  # fmt: skip
    monkeypatch.setattr("harness.adapters.process.jsonl.subprocess", fake)
    STARTED.clear()
    yield STARTED
    STARTED.clear()


def to_adapter_problems(line: Any) -> list[str]:
    errors = validator("to_adapter").iter_errors(line)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"[:300] for e in errors]


def test_every_line_the_harness_sends_is_valid(faked: list[FakeAdapterProcess]) -> None:
    adapter = JsonLinesAdapter("fake", ["fake-adapter"])
    adapter.open(scenarios_version())
    for scenario_id in (SERVICE, ASSEMBLED):
        adapter.run(SCENARIOS[scenario_id], RunOptions())
    adapter.close()
    (process,) = faked
    assert [line["type"] for line in process.sent] == ["hello", "run", "run", "bye"]
    service, assembled = process.sent[1:3]
    assert service["model"] is None
    assert assembled["model"]["session_header"] == "x-fake-session"
    for line in process.sent:
        assert to_adapter_problems(line) == [], line["type"]
    # ...and it is a line to an adapter: the schema tells the two directions apart.
    assert not validator("from_adapter").is_valid(process.sent[0])


def test_an_observation_missing_the_rules_evidence_is_an_error_not_a_pass(
    faked: list[FakeAdapterProcess], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only outcome and direct: with answerer_calls read as 0 and asked as [], it passed.
    sparse = {"outcome": "completed", "direct": OBSERVED["direct"]}
    monkeypatch.setattr(FakeAdapterProcess, "observation", sparse)
    adapter = JsonLinesAdapter("fake", ["fake-adapter"])
    adapter.open(scenarios_version())
    try:
        verdict = run_scenario(SCENARIOS[SERVICE], adapter=adapter)
    finally:
        adapter.close()
    assert verdict.status == "error"
    assert verdict.mismatches[0].startswith(
        f"adapter fake: result for {SERVICE}: observation: missing 'answerer_calls', 'asked'"
    )
