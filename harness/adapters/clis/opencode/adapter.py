"""`opencode`: opencode, the CLI (`opencode-ai`), as a runtime under test.

Installed on first use from adapters/opencode/package-lock.json into that folder's ignored
node_modules; what runs is the platform's prebuilt binary (a Bun executable) that the
package links as `opencode`. Each phase is one `opencode run --format json PROMPT`
process, headless, with home, XDG dirs and work dir of its own in a fresh folder, the
provider in an `opencode.json` in the work dir (Chat Completions to the scenario's fake,
the sentinel key as its apiKey), and, where Linux allows, no network but loopback.

Headless, `opencode run` creates its session with `question`, `plan_enter` and `plan_exit`
denied, and a denied tool is left out of the agent's tools; its `general` subagent denies
`task` too. A call to a tool the agent does not have is turned into a call of opencode's
`invalid` tool, which completes (no error) with "The arguments provided to the tool are
invalid: Model tried to call unavailable tool 'question'...". So a child's ask is not
refused as an error (a known failure), a root that must be answered cannot be expressed
(skipped), and neither can a child that delegates again. Its JSON events carry only the
root session's; every agent's parts are read from its SQLite store
(harness.adapters.clis.opencode.observe).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from harness.adapters._npm import adapter_dir as npm_adapter_dir
from harness.adapters._npm import home_dirs
from harness.adapters.clis.adapter import CliAdapter, member
from harness.contract import SENTINEL_KEY

if TYPE_CHECKING:
    from harness.adapters.clis.run import CliRun, Reader

NAME = "opencode"
PROVIDER, MODEL = "harness", "scripted"
# A session title of our own: with one given, opencode asks the model for none (the title
# request, a side request otherwise, which the dialect declares for runs that are not quiet).
TITLE = "keyless-harness"
NOT_HERE = {
    "resume": "headless opencode continues a session (--session) only as the root it was; "
    "a child's session cannot be brought back as a root of its own",
}


def config(port: int) -> dict[str, object]:
    """The work dir's opencode.json: the fake as its only provider and model, keyless but
    for the sentinel, nothing shared and no update looked for."""
    return {
        "$schema": "https://opencode.ai/config.json",
        "provider": {
            PROVIDER: {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Keyless harness",
                "options": {"baseURL": f"http://127.0.0.1:{port}/v1", "apiKey": SENTINEL_KEY},
                "models": {MODEL: {"name": MODEL}},
            }
        },
        "model": f"{PROVIDER}/{MODEL}",
        "small_model": f"{PROVIDER}/{MODEL}",
        "autoupdate": False,
        "share": "disabled",
    }


class Opencode(CliAdapter):
    """opencode, headless (`opencode run`): no human channel, and no ask tool at all."""

    name = NAME
    label = "opencode"
    program = "opencode"
    features = frozenset(
        {
            "assembled",
            "concurrent-children",
            "parallel-calls",
            "plan-mode",
            "no-answerer",
            "no-user-questions",
        }
    )
    # `npm ci` refuses its lockfile: the package lists a binary per platform as optional,
    # most of which the registry here does not have, which `npm install` passes over and
    # `npm ci` counts as out of sync. `npm install` from the same lockfile, which must come
    # out unchanged (harness.adapters._npm), installs the same tree.
    npm = ("install", "--no-audit", "--no-fund", "--no-save")

    no_human = (
        "headless opencode has no human channel: `opencode run` denies question and plan_exit "
        "to every session"
    )
    no_nesting = "opencode's general subagent is denied task"
    not_here = NOT_HERE

    @classmethod
    def reader(cls, delegation: str) -> Reader:
        from harness.adapters.clis.opencode.observe import Events

        return Events(delegation=delegation)

    def argv(self, run: CliRun, root: str, prompt: str) -> list[str]:
        # --pure: no external plugins. A root in plan mode is opencode's `plan` agent.
        argv = [str(self.cli), "run", "--pure", "--format", "json"]
        if run.scenario.agents[root].plan_mode:
            argv += ["--agent", "plan"]
        if self.quiet:
            argv += ["--title", TITLE]
        return [*argv, prompt]

    def environment(self, run: CliRun, home: Path, port: int) -> dict[str, str]:
        """From nothing: no inherited key, token or proxy reaches the CLI; every dir it
        writes (config, data with its store, cache, state, temp) is in the scenario's."""
        work = run.folder / "work"
        (work / "opencode.json").write_text(json.dumps(config(port), indent=1), "utf-8")
        return {
            **self.bare_environment(run, home),
            **home_dirs(home),
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
        }


def adapter_dir(scenarios: Path | None = None) -> Path:
    """adapters/opencode beside the scenarios being run, else in this checkout."""
    return npm_adapter_dir(NAME, "package-lock.json", scenarios)


def opencode(scenarios: Path | None = None, version: str | None = None) -> Opencode:
    return member(Opencode, adapter_dir(scenarios), version)
