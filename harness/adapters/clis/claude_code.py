"""`claude-code`: Claude Code, the CLI (`@anthropic-ai/claude-code`), as a runtime under test.

Installed on first use with `npm ci` from adapters/claude-code/package-lock.json (integrity
hashes) into that folder's ignored node_modules. Each phase is one CLI process in SDK mode
(`--input-format stream-json --output-format stream-json --permission-prompt-tool stdio`),
with a home, config dir and working dir of its own in a fresh temporary folder, an
environment built from nothing but what it needs (the sentinel key, no other credential),
telemetry, updates and nonessential traffic off, and, where Linux allows, a network
namespace with only loopback (harness.adapters._offline). It talks Anthropic Messages to
the scenario's scripted fake, which spells the scenario's tools in Claude Code's dialect
(harness/dialects/claude-code.json) and tells agents apart by content (it sends no
session header a child's could be told from).

The adapter plays the human through the SDK control channel: a root's `AskUserQuestion` or
`ExitPlanMode` reaches it as a `can_use_tool` request, answered as `world.answerer` says.
A tripwire or unreachable answerer holds the question and never answers; the run is a hang
once nothing can move: no request in flight at the fake, and every agent that is still
going waits on the human or on a child that does. That is decided from the scripts'
progress, never by a timeout, and reported with its wait-for graph.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.adapters._npm import adapter_dir as npm_adapter_dir
from harness.adapters.clis.adapter import CliAdapter, asking_roots, member
from harness.adapters.clis.host_human import can_use_tool, user_message
from harness.adapters.clis.run import CliRun, Due
from harness.contract import SENTINEL_KEY

if TYPE_CHECKING:
    from harness.scenario import Scenario

NAME = "claude-code"
FEATURES = frozenset(
    {
        "assembled",
        "concurrent-children",
        "hang",
        "header-override",
        "nested-delegation",
        "parallel-calls",
        "plan-mode",
        "no-answerer",
        "no-user-questions",
    }
)
# What no scenario of this runtime can express, each with why (the dialect adds its own).
NOT_HERE = {
    "resume": "Claude Code resumes a session only as the root it was (`--resume`); a "
    "child's session cannot be brought back as a root of its own",
}
SKIPS = {
    "exit-plan-mode-heading-rule": "a plan without a # heading: ExitPlanMode takes no plan "
    "(Claude Code reads it from its plan file), so the scripted plan cannot be sent",
    "exit-plan-mode-empty-plan": "an empty plan: ExitPlanMode takes no plan (Claude Code "
    "reads it from its plan file), so the scripted plan cannot be sent",
}


class ClaudeCode(CliAdapter):
    """Claude Code, in SDK mode, with the host playing the human."""

    name = NAME
    label = "Claude Code"
    features = FEATURES

    program = "claude"
    children_in_stream = False  # a child's final text and a grandchild's calls are not

    def argv(self, run: CliRun, root: str, prompt: str) -> list[str]:
        argv = [str(self.cli), "-p", "--input-format", "stream-json",
                "--output-format", "stream-json", "--verbose"]  # fmt: skip
        world = run.scenario.world
        if world.answerer != "none" and world.user_questions:
            argv += ["--permission-prompt-tool", "stdio"]  # else no human channel at all
        if not world.user_questions:  # composed without the service: no ask tool either
            argv += ["--disallowedTools", "AskUserQuestion"]
        if run.scenario.agents[root].plan_mode:
            argv += ["--permission-mode", "plan"]
        return argv

    def opening(self, run: CliRun, prompt: str) -> list[dict[str, Any]]:
        return [user_message(prompt)]

    def environment(self, run: CliRun, home: Path, port: int) -> dict[str, str]:
        """From nothing: no inherited key, token or proxy reaches the CLI."""
        return {
            **self.bare_environment(run, home),
            "CLAUDE_CONFIG_DIR": str(run.folder / "config"),
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
            "ANTHROPIC_API_KEY": SENTINEL_KEY,
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
        } | ({"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"} if self.quiet else {})

    def control(
        self, run: CliRun, process: subprocess.Popen[str], event: dict[str, Any]
    ) -> list[Due]:
        return can_use_tool(self.dialect, run, process, event)

    def override_header(self, run: CliRun, child: str, session: Mapping[str, Any]) -> str | None:
        return override_header(run.folder / "config", child, session)

    def skip(self, scenario: Scenario) -> str | None:
        return (
            _unspellable(scenario, self.dialect.cannot)
            or SKIPS.get(scenario.id)
            or next((NOT_HERE[p.kind] for p in scenario.phases if p.kind in NOT_HERE), None)
            or _unwritable(scenario)
        )


def _unspellable(scenario: Scenario, cannot: Mapping[str, str]) -> str | None:
    """Why the dialect cannot express the scenario, unless only children call the human
    tools in it: Claude Code refuses a subagent's AskUserQuestion and ExitPlanMode as
    unavailable before it looks at their arguments, so a shape it would refuse from a
    root is no way out for a child (tests/clis/test_claude_code.py reads the refusal)."""
    why = cannot.get(scenario.id)
    asks_direct = any(p.kind == "ask" for p in scenario.phases)
    return why if why is not None and (asking_roots(scenario) or asks_direct) else None


def _unwritable(scenario: Scenario) -> str | None:
    """Why a scenario's header override cannot be written into Claude Code's records."""
    for name, agent in scenario.agents.items():
        if agent.session and agent.spawned_by is None:
            return f"{name}, a root, has a header override: Claude Code records no root's lineage"
        # Today's schema allows delegation_depth alone; a field it adds may have no match.
        missing = ", ".join(sorted(set(agent.session) - set(HEADER_FIELDS)))
        if missing:
            return f"{name}'s header override sets {missing}, which Claude Code does not record"
    return None


def adapter_dir(scenarios: Path | None = None) -> Path:
    """adapters/claude-code beside the scenarios being run, else in this checkout."""
    return npm_adapter_dir(NAME, "package-lock.json", scenarios)


def claude_code(scenarios: Path | None = None, version: str | None = None) -> ClaudeCode:
    return member(ClaudeCode, adapter_dir(scenarios), version)


# -- the test-only hook around its human end -------------------------------------------
# A scenario's durable-header field -> the one Claude Code keeps for a subagent (in
# projects/<cwd>/<session>/subagents/agent-<id>.meta.json). Another field has none.
HEADER_FIELDS = {"delegation_depth": "spawnDepth"}


def override_header(config: Path, child: str, session: Mapping[str, Any]) -> str | None:
    """Write `session` into the durable record of the subagent named `child` (its `Agent`
    call's description), a null field removed; None when done, else why not."""
    records = [
        path
        for path in sorted(config.glob("projects/*/*/subagents/agent-*.meta.json"))
        if json.loads(path.read_text("utf-8")).get("description") == child
    ]
    if len(records) != 1:
        return f"found {len(records)} durable records of {child} to override, not one"
    record = json.loads(records[0].read_text("utf-8"))
    for field, value in session.items():
        if value is None:
            record.pop(HEADER_FIELDS[field], None)
        else:
            record[HEADER_FIELDS[field]] = value
    records[0].write_text(json.dumps(record), "utf-8")
    return None
