"""The published upstream CLI (adapters/node-dsh, `dsh --profile headless`) on the assembled
scenarios: keyless on the wire, routed without X-Harness-Agent, reported in the scenario's
names, and every scenario it cannot run skipped with its reason.

These start Node.js processes; the first run installs the adapter (about 30 s, once).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.adapters import JsonLinesAdapter, open_adapter
from harness.run import Wire, run_scenario
from tests.conftest import SCENARIOS

ROOT = Path(__file__).parents[1]
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


def test_the_hello_declares_how_upstream_talks_to_a_model(upstream: JsonLinesAdapter) -> None:
    assert upstream.session_header == "x-deepseek-harness-session-id"
    assert upstream.delegation.to_json() == {
        "tool": "subagent",
        "arguments": {"description": "{name}", "prompt": "{prompt}", "run_in_background": False},
    }
    assert "@deepseek-ai/dsh@0.1.0-rc.8 headless on node v22." in upstream.runtime


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


def test_what_upstream_cannot_run_is_skipped_with_the_reason(upstream: JsonLinesAdapter) -> None:
    skipped = run_scenario(SCENARIOS["missing-registry"], adapter=upstream)
    assert skipped.status == "skip"
    assert skipped.mismatches == [
        "upstream's headless profile cannot run a delegation without its agent registry "
        "(ctx.agents)"
    ]
    by_feature = run_scenario(SCENARIOS["stale-same-id-object"], adapter=upstream)
    assert by_feature.mismatches == ["node-dsh does not run faults scenarios"]
