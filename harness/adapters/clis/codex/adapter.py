"""`codex`: Codex, the CLI (`@openai/codex`), as a runtime under test.

Installed on first use with `npm ci` from adapters/codex/package-lock.json (integrity
hashes) into that folder's ignored node_modules: a `codex.js` launcher and the native
binary of this platform, an optional dependency npm picks by `os` and `cpu`. Each phase is
one `codex exec --json --skip-git-repo-check PROMPT` process, headless, stdin closed, with
a home and CODEX_HOME of its own in a fresh folder, its config.toml there (the fake as a
Responses provider whose key is the sentinel's variable, no retries, analytics and the
update check off), and, where Linux allows, no network but loopback. It talks OpenAI
Responses to the scenario's scripted fake, in Codex's dialect (harness/dialects/codex.json:
a delegation is `spawn_agent` then `wait_agent`, the second sent by the fake as the
dialect's `then`), told apart by content.

Headless, Codex has no human channel: a root's `request_user_input` is refused ("only
available in Plan mode", which `codex exec` cannot enter), so a scenario whose root must be
answered cannot be expressed and is skipped. A child's is refused by a caller check of its
own ("request_user_input can only be used by the root thread"), a failed tool call its
router logs as an error: the rule in Codex's words. Its output is read back by
harness.adapters.clis.codex.observe, from the stream and the rollouts Codex keeps per thread.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from harness.adapters._npm import adapter_dir as npm_adapter_dir
from harness.adapters.clis.adapter import CliAdapter, member
from harness.adapters.clis.codex.observe import ERRORS, Events
from harness.contract import SENTINEL_KEY
from harness.fake.dialect import DELEGATION_TOOL

if TYPE_CHECKING:
    from harness.adapters.clis.run import CliRun, Reader
    from harness.scenario import Scenario

NAME = "codex"
KEY_VAR = "HARNESS_API_KEY"  # the provider's env_key: the sentinel, its only credential
# Phase kinds, and what headless Codex cannot do with them.
NOT_HERE = {
    "resume": "codex exec resumes a thread only as the root it was (`codex exec resume`); a "
    "child's thread cannot be brought back as a root of its own",
}
# The stderr of each phase, copied beside the rollouts (its tool router's errors are how a
# failed call is known: observe.py) and still passed on to the runner, which shows its
# tail when the CLI fails. bash, for the process substitution.
TEE = 'exec "$@" 2> >(exec tee -a "$0" >&2)'


def config(port: int) -> str:
    """CODEX_HOME/config.toml: the fake as the only provider; nothing else asked of the
    network (no retries, no analytics, no update check)."""
    return f"""model = "scripted"
model_provider = "harness"
approval_policy = "never"
sandbox_mode = "read-only"
check_for_update_on_startup = false

[model_providers.harness]
name = "Keyless harness"
base_url = "http://127.0.0.1:{port}/v1"
wire_api = "responses"
env_key = "{KEY_VAR}"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false
"""


class Codex(CliAdapter):
    """Codex, headless (`codex exec --json`): no human channel at all."""

    name = NAME
    label = "Codex"
    program = "codex"
    # Claimed so that what headless Codex cannot do is skipped with its own reason (skip).
    features = frozenset(
        {"assembled", "concurrent-children", "nested-delegation", "no-answerer", "parallel-calls"}
    )

    no_human = (
        "headless Codex has no human channel: request_user_input is only available in Plan "
        "mode, which codex exec cannot enter"
    )
    no_nesting = "Codex gives its subagents no multi_agent_v1 tools"
    not_here = NOT_HERE

    @classmethod
    def reader(cls, delegation: str) -> Reader:
        return Events(delegation=delegation)

    def argv(self, run: CliRun, root: str, prompt: str) -> list[str]:
        if isinstance(run.stream, Events) and not run.stream.prompts:
            run.stream.prompts = child_prompts(run.scenario)
        command = [str(self.cli), "exec", "--json", "--skip-git-repo-check", prompt]
        return ["/bin/bash", "-c", TEE, str(run.folder / ERRORS), *command]

    def environment(self, run: CliRun, home: Path, port: int) -> dict[str, str]:
        """From nothing: no inherited key, token or proxy reaches the CLI; its home and
        CODEX_HOME are the scenario's."""
        codex_home = home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        (codex_home / "config.toml").write_text(config(port), encoding="utf-8")
        return {
            **self.bare_environment(run, home),
            "CODEX_HOME": str(codex_home),
            KEY_VAR: SENTINEL_KEY,
        }


def child_prompts(scenario: Scenario) -> dict[str, str]:
    """Each delegation prompt of the scenario -> the child it starts: the reader names each
    child by the prompt its parent's spawn_agent gave it (Events.prompts)."""
    return {
        str(c.args["prompt"]): str(c.args["name"])
        for agent in scenario.agents.values()
        for turn in agent.script
        for c in turn.calls
        if c.tool == DELEGATION_TOOL and isinstance(c.args.get("prompt"), str)
    }


def adapter_dir(scenarios: Path | None = None) -> Path:
    """adapters/codex beside the scenarios being run, else in this checkout."""
    return npm_adapter_dir(NAME, "package-lock.json", scenarios)


def codex(scenarios: Path | None = None, version: str | None = None) -> Codex:
    return member(Codex, adapter_dir(scenarios), version)
