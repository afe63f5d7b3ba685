"""The published upstream CLI (adapters/node-dsh, `dsh --profile headless`) on the assembled
scenarios: keyless on the wire, routed without X-Harness-Agent, reported in the scenario's
names, and every scenario it cannot run skipped with its reason.

These start Node.js processes; the first run installs the adapter (about 30 s, once).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.adapters import JsonLinesAdapter, open_adapter
from harness.run import Wire, run_scenario
from harness.runtime.tools.exit_plan_mode import PLAN_POLICY
from tests.conftest import SCENARIOS

ROOT = Path(__file__).parents[2]
SNAPSHOTS = ROOT / "snapshots"
ASSEMBLED = (ROOT / "adapters" / "node-dsh" / "assembled.mjs").read_text("utf-8")
DUMMY_KEY = re.search(r'const DUMMY_KEY = "([^"]+)"', ASSEMBLED)[1]  # type: ignore[index]

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="node and npm are not on PATH; .ci/run says SKIPPED loudly in that case",
)


@pytest.fixture(scope="module")
def upstream() -> Iterator[JsonLinesAdapter]:
    adapter = open_adapter("node-dsh")
    assert isinstance(adapter, JsonLinesAdapter)
    try:
        yield adapter
    finally:
        adapter.close()


@pytest.mark.cli
def test_the_hello_declares_how_upstream_talks_to_a_model(upstream: JsonLinesAdapter) -> None:
    assert upstream.session_header == "x-deepseek-harness-session-id"
    assert upstream.dialect.delegation.to_json() == {
        "tool": "subagent",
        "arguments": {"description": "{name}", "prompt": "{prompt}", "run_in_background": False},
    }
    assert "@deepseek-ai/dsh@0.1.0-rc.8 headless on node v22." in upstream.runtime


@pytest.mark.cli
def test_a_delegation_on_upstream_is_keyless_and_reads_in_the_scenarios_names(
    upstream: JsonLinesAdapter,
) -> None:
    scenario = SCENARIOS["delegated-question-handoff"]
    result = run_scenario(scenario, adapter=upstream, golden=SNAPSHOTS, wire=Wire(True, 1))
    assert result.status == "pass", "\n".join(result.mismatches)
    requests = result.observation.requests
    assert [r.agent for r in requests] == ["parent", "child", "child", "parent"]
    for request in requests:
        headers = {name.lower(): value for name, value in request.headers}
        # The provider refuses to start without a key; none of it may reach the fake.
        assert "authorization" not in headers
        assert DUMMY_KEY not in repr(request.headers) and DUMMY_KEY.encode() not in request.raw
        assert "x-harness-agent" not in headers  # routed by upstream's own session header
        assert headers["x-deepseek-harness-session-id"]
    (handoff,) = result.observation.handoffs
    assert (handoff["parent"], handoff["child"]) == ("parent", "child")  # not upstream's uuids


def _in_plan_mode(observed: dict[str, object]) -> dict[str, list[bool]]:
    """Per agent, for each distinct system prompt it was sent (in the order first sent),
    whether the prompt carries the plan-mode policy section."""
    system = observed["model_prefix"]["system"]  # type: ignore[index]
    return {
        agent: [PLAN_POLICY in prompt for prompt in (seen if isinstance(seen, list) else [seen])]
        for agent, seen in system.items()
    }


@pytest.mark.cli
@pytest.mark.parametrize(
    "plan_scenario",
    ["plan-mode-root-approved", "plan-mode-child-refused", "plan-review-dismissed",
     "exit-plan-mode-outside-plan-mode"],
)  # fmt: skip
def test_the_plan_mode_section_comes_and_goes_on_upstream_as_in_the_goldens(
    upstream: JsonLinesAdapter, plan_scenario: str
) -> None:
    # Prompts are each runtime's own, but the plan:policy section is upstream's text, shown
    # while plan mode is on (pending included) and gone from the step after an approval.
    result = run_scenario(SCENARIOS[plan_scenario], adapter=upstream)
    golden = json.loads((SNAPSHOTS / f"{plan_scenario}.json").read_text("utf-8"))
    shown = _in_plan_mode(golden)
    assert _in_plan_mode(result.observation.snapshot()) == shown
    # The comparison means something only where the section shows at all.
    in_plan_mode = plan_scenario != "exit-plan-mode-outside-plan-mode"
    assert any(True in seen for seen in shown.values()) == in_plan_mode


@pytest.mark.cli
def test_what_upstream_cannot_run_is_skipped_with_the_reason(upstream: JsonLinesAdapter) -> None:
    skipped = run_scenario(SCENARIOS["missing-registry"], adapter=upstream)
    assert skipped.status == "skip"
    assert skipped.mismatches == [
        "upstream's headless profile cannot run a delegation without its agent registry "
        "(ctx.agents)"
    ]
    by_feature = run_scenario(SCENARIOS["stale-same-id-object"], adapter=upstream)
    assert by_feature.mismatches == ["node-dsh does not run faults scenarios"]


@pytest.mark.cli
def test_a_build_without_the_guard_turns_the_gate_red_naming_who_reached_the_human() -> None:
    # Our own stand-in for upstream before the fix, in the fix commit's spelling
    # (UserInteractionService on ctx.userInteraction): the adapter loads it in place of the
    # published service, maps the names, and the run fails for the right reason.
    build = ROOT / "tests" / "fixtures" / "user-interaction-no-guard" / "index.js"
    ids = ["service-zero-depth-live-child", "delegated-question-handoff", "root-no-answerer"]
    done = subprocess.run(
        # --backstop 60: under CI's load dsh once ended this run as "error" rather than the
        # hang (stop 22), likely at the default 10 s deadline before it reached the
        # answerer. A hang is reported the moment the answerer is reached, so the larger
        # bound costs nothing when all is well.
        [sys.executable, "-m", "harness", "run", "--adapter", "node-dsh", "--json",
         "--backstop", "60", *ids],
        capture_output=True, text=True, timeout=240, cwd=ROOT,
        env={**os.environ, "NODE_DSH_USER_QUESTIONS": str(build)},
    )  # fmt: skip
    assert done.returncode == 3, done.stderr  # a hang no scenario expected
    report = json.loads(done.stdout)
    assert f"user-questions from {build}" in report["runtime"]
    verdicts = {s["id"]: (s["verdict"], s["observed"]) for s in report["scenarios"]}
    verdict, observed = verdicts["service-zero-depth-live-child"]
    assert (verdict, observed["outcome"], observed["answerer_calls"]) == ("NEW FAIL", "hang", 1)
    assert (
        observed["error"]
        == "child (owned by parent) reached the human, and the answerer never answers"
    )
    verdict, observed = verdicts["delegated-question-handoff"]
    assert (verdict, observed["outcome"]) == ("NEW FAIL", "hang"), observed.get("error")
    assert observed["error"].startswith(
        "child (a child of parent, delegationDepth 1) reached the human"
    )
    # A root with no provider is unaffected; the earlier "user-interaction provider" text is
    # read in the published spelling, so it passes.
    assert verdicts["root-no-answerer"][0] == "PASS"


def test_a_missing_build_is_refused_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.adapters import AdapterError

    monkeypatch.setenv("NODE_DSH_USER_QUESTIONS", "no/such/build/index.js")
    with pytest.raises(AdapterError) as info:
        open_adapter("node-dsh")
    assert str(info.value) == (
        "adapter node-dsh: NODE_DSH_USER_QUESTIONS=no/such/build/index.js is not a file; name "
        "the built plugin entry of another user-questions build (e.g. .../lib/index.js)"
    )


def test_the_install_reads_and_writes_nothing_in_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # npm and pnpm default to ~/.npmrc and ~/.npm (cache and logs): every install step must
    # be pointed inside the adapter's own folder instead. Each step is recorded, not run.
    from harness.adapters import _node
    from harness.adapters.process import node_dsh as _node_dsh

    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    steps: list[tuple[list[str], dict[str, str]]] = []

    def record(adapter: str, where: Path, what: str, command: list[str], lock: Path,
               env: dict[str, str] | None = None) -> None:  # fmt: skip
        steps.append((command, env if env is not None else dict(os.environ)))

    monkeypatch.setattr(_node_dsh, "_npm_install", record)
    monkeypatch.setattr(_node, "install", record)
    monkeypatch.setattr(_node, "version", lambda node: (22, 23))
    found = _node.node_at_least((22, 15), "node-dsh")  # the Node 22 it will find
    steps.clear()
    adapter = _node_dsh.node_dsh()
    assert adapter._prepare is not None
    adapter._prepare()
    root, toolchain = _node_dsh.adapter_dir(None), _node.toolchain_dir(None)
    # npm ci here, npm ci in adapters/toolchain, pnpm install in dsh/ on that Node 22.
    assert [next(w for w in c if w in ("ci", "install")) for c, _ in steps] == [
        "ci", "ci", "install"
    ]  # fmt: skip
    assert steps[2][0][0] == found
    for (_, env), where in zip(steps, (root, toolchain, root), strict=True):
        for name in ("npm_config_cache", "npm_config_userconfig"):
            assert Path(env[name]).is_relative_to(where), (name, env[name])
    assert not home.exists()
