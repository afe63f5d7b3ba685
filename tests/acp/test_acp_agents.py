"""What each named ACP agent's adapter knows of it, without running it: how Qwen Code takes
an ask's answers, how a Codex child's refusal is read from its app server's log, which
message chunks are a root's words, and how a child is named from a Codex spawn."""

from __future__ import annotations

import tomllib
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from harness.adapters.acp.codex import LOGS, CodexAcp, toml
from harness.adapters.acp.observe import child_name
from harness.adapters.acp.qwen_code import QwenCodeAcp
from harness.adapters.acp.run import AcpRun, _aside
from harness.fake.dialect import ASK_TOOL, PLAN_TOOL, Dialect
from harness.runtime.questions import Answer
from harness.scenario._model import Reply
from tests.conftest import SCENARIOS

NO = {"cuda-fallback": Reply(items=(Answer("cuda-fallback", ("No",)),))}
QUESTIONS = [{"id": "cuda-fallback", "question": "Should deployment use the CUDA fallback?"}]


def bare(cls: type[Any]) -> Any:
    """The adapter without its install: only what the tested method reads."""
    made = object.__new__(cls)
    made.dialect = Dialect.load(cls.dialect_name)
    return made


def test_qwen_takes_an_asks_answers_by_question_index() -> None:
    qwen = bare(QwenCodeAcp)
    assert qwen.permission_reply(ASK_TOOL, {}, QUESTIONS, NO) == (True, {"answers": {"0": "No"}})
    dismissed = {"cuda-fallback": Reply(dismissed=True)}
    assert qwen.permission_reply(ASK_TOOL, {}, QUESTIONS, dismissed) == (False, {})


def test_a_plan_review_is_allowed_only_when_approved_alone() -> None:
    qwen = bare(QwenCodeAcp)
    approve = {"plan-review": Reply(items=(Answer("plan-review", ("Approve",)),))}
    keep = {"plan-review": Reply(items=(Answer("plan-review", ("Approve",), "but slower"),))}
    assert qwen.permission_reply(PLAN_TOOL, {}, [], approve) == (True, {})
    assert qwen.permission_reply(PLAN_TOOL, {}, [], keep) == (False, {})


def test_a_codex_childs_refusal_is_the_error_its_router_logged(tmp_path: Path) -> None:
    logs = tmp_path / LOGS
    logs.mkdir()
    (logs / "app-server.log").write_text(
        "2026-12-07 [ERR] \x1b[31mERROR\x1b[0m \x1b[2mcodex_core::tools::router\x1b[0m\x1b[2m:"
        "\x1b[0m \x1b[3merror\x1b[0m\x1b[2m=\x1b[0mrequest_user_input can only be used by "
        "the root thread\n",
        "utf-8",
    )
    run: Any = SimpleNamespace(folder=tmp_path)
    codex = bare(CodexAcp)
    assert codex.failed(run, "call_3", "request_user_input can only be used by the root thread")
    assert not codex.failed(run, "call_4", "UNRESOLVED: Should deployment use the CUDA fallback?")


def test_codex_config_is_toml_that_names_the_fake() -> None:
    config = tomllib.loads(toml(4242))
    assert config["model_providers"]["harness"]["base_url"] == "http://127.0.0.1:4242/v1"
    assert config["model_provider"] == "harness"
    assert config["analytics"] == {"enabled": False}


def test_a_childs_chunks_and_the_agents_notices_are_no_words_of_the_root() -> None:
    assert _aside({"_meta": {"parentToolCallId": "call_1"}})  # Qwen Code's child
    assert _aside({"_meta": {"claudeCode": {"parentToolUseId": "toolu_1"}}})
    assert _aside({"_meta": {"claudeCode": {"kind": "informational"}}})
    assert not _aside({"_meta": {"claudeCode": {}}})
    assert not _aside({})


def test_a_roots_last_message_is_told_apart_by_its_message_id() -> None:
    run: Any = object.__new__(AcpRun)
    run.updates, run.tools, run.said, run._message = [], {}, {}, {}
    run.watchdog = SimpleNamespace(saw=lambda doing: None)
    for message, text in ((None, "Warning: no model metadata"), ("msg_1", "PARENT_"),
                          ("msg_1", "COMPLETED")):  # fmt: skip
        chunk = {"sessionUpdate": "agent_message_chunk", "messageId": message,
                 "content": {"type": "text", "text": text}}  # fmt: skip
        run.updated("s", {k: v for k, v in chunk.items() if v is not None})
    assert ["".join(m) for m in run.said["s"]] == ["Warning: no model metadata", "PARENT_COMPLETED"]


def test_a_codex_child_is_named_by_the_prompt_its_spawn_carries() -> None:
    scenario = SCENARIOS["delegated-question-handoff"]
    run: Any = SimpleNamespace(agent=bare(CodexAcp), scenario=scenario)
    prompt = next(c.args["prompt"] for t in scenario.agents["parent"].script for c in t.calls)
    assert child_name(run, {"message": prompt}) == "child"
    assert child_name(run, {"message": "another prompt"}) is None


def test_opencode_waits_on_no_one_for_a_tool_it_was_not_offered() -> None:
    # opencode shows a call of a tool the agent lacks in progress for a moment, then runs it
    # as its `invalid` tool: no question waits on a human, so no hang may be declared.
    from harness.adapters.acp.opencode import OpencodeAcp

    args = {"questions": [{"question": "Should deployment use the CUDA fallback?"}]}
    declared = {"tools": [{"type": "function", "function": {"name": "question"}}]}
    run: Any = SimpleNamespace(
        in_progress=lambda tool: {"call_1": {}} if tool == ASK_TOOL else {},
        issued=lambda call_id: ("lead", "question", args),
        scripted=[{"id": "cuda-fallback", **args["questions"][0]}],
        llm=SimpleNamespace(requests=[SimpleNamespace(agent="lead", body=declared)]),
    )
    opencode = bare(OpencodeAcp)
    assert list(opencode.unasked(run)) == ["call_1"]
    assert opencode.unasked(run)["call_1"][0] == "cuda-fallback"
    run.llm.requests = [SimpleNamespace(agent="lead", body={"tools": []})]
    assert opencode.unasked(run) == {}
