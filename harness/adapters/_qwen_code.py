"""`qwen-code`: Qwen Code, the CLI (`@qwen-code/qwen-code`), as a runtime under test.

Installed on first use with `npm ci` from adapters/qwen-code/package-lock.json into that
folder's ignored node_modules; it is a bundled `cli.js` run on the `node` on PATH. Each
phase is one `qwen -p PROMPT --output-format stream-json` process, headless, with a home of
its own in a fresh folder, its settings file there (OpenAI-compatible auth, usage
statistics and telemetry off), the sentinel key, and, where Linux allows, no network but
loopback. It talks Chat Completions to the scenario's scripted fake, in Qwen Code's dialect
(harness/dialects/qwen-code.json), told apart by content.

Headless, Qwen Code has no human channel: every `ask_user_question` (a root's or a child's)
comes back as a plain, non-error result ("Cannot ask user questions in non-interactive
mode without ACP support..."), and `exit_plan_mode` is declined as a permission it cannot
prompt for. So a scenario whose root must be answered cannot be expressed, and is skipped;
a child's ask is not refused as an error, which misses the rule (a known failure, with the
public issues that report the child's ask: QwenLM/qwen-code #7126, #7835). Its stream-json
carries a child's events, tagged with the `agent` call that started it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from harness.adapters._cli_adapter import CliAdapter, asking_roots, offline_choice
from harness.adapters._npm import adapter_dir as npm_adapter_dir
from harness.contract import SENTINEL_KEY

if TYPE_CHECKING:
    from harness.adapters._cli_run import CliRun
    from harness.scenario import Scenario

NAME = "qwen-code"
# What it settles from its settings file: the OpenAI-compatible provider, and nothing sent
# home (usage statistics are on by default, and look up a host outside loopback).
SETTINGS = {
    "security": {"auth": {"selectedType": "openai"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
}
# Phase kinds, and what headless Qwen Code cannot do with them.
NOT_HERE = {
    "resume": "headless Qwen Code resumes a session only as the root it was; a child's "
    "session cannot be brought back as a root of its own",
}


class QwenCode(CliAdapter):
    """Qwen Code, headless (`-p`): no human channel at all."""

    name = NAME
    label = "Qwen Code"
    program = "qwen"
    features = frozenset({"assembled", "parallel-calls", "plan-mode", "no-answerer"})
    children_in_stream = True
    # `npm ci` refuses its lockfile: the package lists optional clipboard binaries for other
    # platforms that the registry does not have, which `npm install` passes over as
    # optional and `npm ci` counts as out of sync. `npm install` from the same lockfile,
    # which must come out unchanged (harness.adapters._npm), installs the same tree.
    npm = ("install", "--no-audit", "--no-fund", "--no-save")

    def skip(self, scenario: Scenario) -> str | None:
        roots = asking_roots(scenario)
        if roots and scenario.world.answerer == "scripted":
            return (
                f"{roots[0]}, a root, is to be answered, and headless Qwen Code has no "
                "human channel: its ask comes back unasked"
            )
        nested = [a for a in scenario.agents.values() if a.spawned_by in scenario.agents
                  and scenario.agents[a.spawned_by].spawned_by is not None]  # fmt: skip
        if nested:
            return "a child delegates again: Qwen Code gives its subagents no agent tool"
        return super().skip(scenario) or next(
            (NOT_HERE[p.kind] for p in scenario.phases if p.kind in NOT_HERE), None
        )

    def argv(self, run: CliRun, root: str, prompt: str) -> list[str]:
        argv = [str(self.cli), "-p", prompt, "--output-format", "stream-json"]
        if run.scenario.agents[root].plan_mode:
            argv += ["--approval-mode", "plan"]
        return argv

    def environment(self, run: CliRun, home: Path, port: int) -> dict[str, str]:
        """From nothing: no inherited key, token or proxy reaches the CLI."""
        settings = home / ".qwen" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps(SETTINGS), encoding="utf-8")
        return {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": str(home),
            "TMPDIR": str(run.folder),
            "TERM": "dumb",
            "LANG": "C.UTF-8",
            "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
            "OPENAI_API_KEY": SENTINEL_KEY,
            "OPENAI_MODEL": "scripted",
        }


def adapter_dir(scenarios: Path | None = None) -> Path:
    """adapters/qwen-code beside the scenarios being run, else in this checkout."""
    return npm_adapter_dir(NAME, "package-lock.json", scenarios)


def qwen_code(scenarios: Path | None = None) -> QwenCode:
    return QwenCode(adapter_dir(scenarios), offline_choice())
