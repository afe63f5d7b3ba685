"""The shipped dialects as a process meets them: `harness serve --dialect`, and a JSON-lines
adapter declaring one in its hello (the in-process checks are in tests/test_dialects.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager

import httpx
import pytest

from harness.contract import SENTINEL_KEY
from harness.fake.dialect import Dialect
from harness.run import run_scenario
from tests.conftest import SCENARIOS
from tests.serving import Served
from tests.test_dialects import declared


def test_harness_serve_speaks_a_shipped_dialect(
    serve_process: Callable[..., AbstractContextManager[Served]],
) -> None:
    # Qwen Code's way: its `agent` tool on the root, `ask_user_question` in its own shape
    # on the child, which is told apart by content (no header).
    tools = declared("qwen-code")
    declare = [{"type": "function", "function": {"name": n, "parameters": tools[n]}}
               for n in ("agent", "ask_user_question")]  # fmt: skip
    with serve_process("delegated-question-handoff", "--dialect", "qwen-code") as server:
        headers = {"authorization": f"Bearer {SENTINEL_KEY}"}
        with httpx.Client(base_url=server.url, headers=headers) as client:
            root = [{"role": "user", "content": "Prepare the deployment."}]
            body = {"model": "m", "messages": root, "tools": declare}
            (call,) = client.post("/chat/completions", json=body).json()["choices"][0][
                "message"]["tool_calls"]  # fmt: skip
            assert call["function"]["name"] == "agent"
            args = json.loads(call["function"]["arguments"])
            # In the foreground: since 0.24 a subagent runs in the background unless told.
            assert args["run_in_background"] is False
            assert set(args) == {"description", "prompt", "subagent_type", "run_in_background"}
            child = [{"role": "user", "content": args["prompt"]}]
            body = {"model": "m", "messages": child, "tools": declare}
            (ask,) = client.post("/chat/completions", json=body).json()["choices"][0][
                "message"]["tool_calls"]  # fmt: skip
    assert ask["function"]["name"] == "ask_user_question"
    import jsonschema

    jsonschema.validate(json.loads(ask["function"]["arguments"]), tools["ask_user_question"])


def test_serve_refuses_a_dialect_and_a_delegation_together(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from harness.cli import main

    args = ["serve", "delegated-question-handoff", "--dialect", "opencode", "--delegation", "{}"]
    assert main(args) == 2
    assert "--delegation is the dialect's subagent alone" in capsys.readouterr().err
    assert main(["serve", "delegated-question-handoff", "--dialect", "nonesuch"]) == 2
    assert "nonesuch: no such dialect file; or name a shipped one" in capsys.readouterr().err


@pytest.mark.parametrize("declared_as", ["opencode", "file"])
def test_an_adapter_declares_its_dialect_in_the_hello(declared_as: str) -> None:
    from tests.process.test_adapters import started

    value = "opencode" if declared_as == "opencode" else json.dumps(
        Dialect.load("opencode").to_json()
    )  # fmt: skip
    adapter = started("--probe-model", "--features", "assembled", "--dialect", value)
    try:
        assert adapter.dialect == Dialect.load("opencode")
        result = run_scenario(SCENARIOS["delegated-question-handoff"], adapter=adapter)
    finally:
        adapter.close()
    # The probe asked the fake once, as the parent: the delegation came back as `task`.
    (said,) = json.loads(result.observation.final["parent"] or "")
    assert said["function"]["name"] == "task"
    assert json.loads(said["function"]["arguments"])["subagent_type"] == "general"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--dialect", "[1]"], "hello: dialect"),
        (["--dialect", "nonesuch"], "nonesuch: no such dialect file"),
        (["--dialect", "opencode", "--delegation", "{}"], "delegation is the dialect's subagent"),
    ],
)
def test_a_bad_dialect_in_the_hello_refuses_the_adapter(flags: list[str], message: str) -> None:
    from harness.adapters import AdapterError
    from tests.process.test_adapters import started

    with pytest.raises(AdapterError, match=r"^adapter py: ") as info:
        started(*flags)
    assert message in str(info.value)
