"""The official Node SDKs run a whole delegation tree against `harness serve` on each of its
three wires (openai's Chat Completions and Responses, @anthropic-ai/sdk's Messages), streamed
and not, with no routing header and the sentinel key; every wire must end with the same
final and hand the same children's finals back up, those the scenario expects (the Python
SDKs' twins are in tests/test_serve.py, tests/test_wire_anthropic.py and
tests/test_wire_responses.py).

The SDKs are installed from tests/fixtures/node-sdks's lockfile on first use, and again
whenever the lockfile changes.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from harness.adapters._npm import npm_settings
from harness.contract import SENTINEL_KEY
from harness.runtime.questions import DELEGATED_CALLER, MESSAGES
from tests.conftest import SCENARIOS
from tests.serving import Served

CLIENT = Path(__file__).parent / "fixtures" / "node-sdks"
# delegate.mjs's names for the wires (not `wire`: tests/conftest.py parametrises that one)
APIS = ["chat-completions", "anthropic-messages", "openai-responses"]

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="node and npm are not on PATH; .ci/run says SKIPPED loudly in that case",
)


@pytest.fixture(scope="session")
def node_sdks() -> Path:
    # One install for every xdist worker: the first takes the lock and installs; a marker
    # holding the lockfile's digest makes a changed lockfile install again.
    lockfile = CLIENT / "package-lock.json"
    digest = hashlib.sha256(lockfile.read_bytes()).hexdigest()
    marker = CLIENT / "node_modules" / ".keyless-harness-lock"
    with lockfile.open() as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not marker.is_file() or marker.read_text().strip() != digest:
            # npm's cache, logs and user configuration kept out of $HOME, as for node-dsh.
            done = subprocess.run(
                ["npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts"],
                cwd=CLIENT, capture_output=True, text=True, timeout=300,
                env={**os.environ, **npm_settings(CLIENT)},
            )  # fmt: skip
            assert done.returncode == 0, f"npm ci in {CLIENT} failed:\n{done.stderr[-2000:]}"
            marker.write_text(digest + "\n")
    return CLIENT


@pytest.mark.parametrize("transport", ["json", "sse"])
@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(
    ("served_id", "dialect"),
    [
        ("grandchild-refused", None),
        (
            "parallel-children-refused",
            {"tool": "task", "arguments": {"description": "{name}", "prompt": "{prompt}"}},
        ),
    ],
    ids=["nested-subagent", "parallel-task-dialect"],
)
def test_the_node_sdks_run_a_delegation_tree_against_serve_on_every_wire(
    node_sdks: Path,
    serve_process: Callable[..., AbstractContextManager[Served]],
    api: str,
    transport: str,
    served_id: str,
    dialect: dict[str, object] | None,
) -> None:
    options = ["--delegation", json.dumps(dialect)] if dialect else []
    with serve_process(served_id, "--idle-timeout", "20", *options) as server:
        tool = str(dialect["tool"]) if dialect else "subagent"
        refusal = "Error: " + MESSAGES[DELEGATED_CALLER]
        ran = subprocess.run(
            ["node", "delegate.mjs", server.url, api, transport, tool, refusal, SENTINEL_KEY],
            cwd=node_sdks, capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        assert ran.returncode == 0, ran.stderr[-2000:] + server.stderr()[-2000:]
        # The same on every wire, and what the scenario expects: the root's final, and
        # each child's final handed back up, in the order the children finished.
        expect = SCENARIOS[served_id].expect
        assert json.loads(ran.stdout) == {
            "final": expect.final["parent"].equals,
            "handoffs": [handoff.equals for handoff in expect.handoffs or ()],
        }
        assert server.wait(10) == 0, server.stderr()
        assert "all scripts consumed" in server.stderr()
