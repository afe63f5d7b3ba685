"""The official Node SDKs run a whole delegation tree against `harness serve` on its four
wires (openai's Chat Completions and Responses, @anthropic-ai/sdk's Messages, @google/genai's
generateContent), streamed and not, with no routing header and the sentinel key; every wire
must end with the same final and hand the same children's finals back up, those the
scenario expects (the Python SDKs' twins are in tests/test_serve.py,
tests/test_wire_anthropic.py, tests/test_wire_responses.py and tests/test_wire_gemini.py).

The SDKs are installed from tests/fixtures/node-sdks's lockfile on first use, and again
whenever the lockfile changes.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.adapters._npm import npm_settings
from harness.contract import SENTINEL_KEY
from harness.runtime.questions import DELEGATED_CALLER, MESSAGES
from tests.conftest import SCENARIOS
from tests.serving import Served, serve_process

CLIENT = Path(__file__).parent / "fixtures" / "node-sdks"
# delegate.mjs's names for the wires (not `wire`: tests/conftest.py parametrises that one)
APIS = ["chat-completions", "anthropic-messages", "openai-responses", "gemini-generate"]

# `cli`: they start Node, so they run with the real runtimes (`pytest -m cli`), not in the
# default run; the Python SDKs' twins stay there.
pytestmark = [
    pytest.mark.cli,
    pytest.mark.skipif(
        shutil.which("node") is None or shutil.which("npm") is None,
        reason="node and npm are not on PATH; .ci/run says SKIPPED loudly in that case",
    ),
]


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
    node_sdks: Path, tmp_path: Path, served_id: str, dialect: dict[str, object] | None
) -> None:
    # Each wire, JSON and SSE, against a server of its own, all in one Node process: Node
    # and the SDKs load once, where each run used to pay for them.
    runs = [(api, transport) for api in APIS for transport in ("json", "sse")]
    options = ["--delegation", json.dumps(dialect)] if dialect else []
    with contextlib.ExitStack() as stack:
        servers: list[Served] = []
        for api, transport in runs:
            logs = tmp_path / f"{api}-{transport}"
            logs.mkdir()
            servers.append(stack.enter_context(
                serve_process(served_id, "--idle-timeout", "20", *options, log_dir=logs)
            ))  # fmt: skip
        tool = str(dialect["tool"]) if dialect else "subagent"
        refusal = "Error: " + MESSAGES[DELEGATED_CALLER]
        specs = [
            f"{s.url},{api},{transport}" for s, (api, transport) in zip(servers, runs, strict=True)
        ]
        ran = subprocess.run(
            ["node", "delegate.mjs", tool, refusal, SENTINEL_KEY, *specs],
            cwd=node_sdks, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        said = "".join(s.stderr()[-1000:] for s in servers)
        assert ran.returncode == 0, ran.stderr[-2000:] + said
        # The same on every wire, and what the scenario expects: the root's final, and
        # each child's final handed back up, in the order the children finished.
        expect = SCENARIOS[served_id].expect
        wanted = {
            "final": expect.final["parent"].equals,
            "handoffs": [handoff.equals for handoff in expect.handoffs or ()],
        }
        lines = ran.stdout.splitlines()
        assert len(lines) == len(runs), ran.stdout
        for (api, transport), line, server in zip(runs, lines, servers, strict=True):
            assert (api, transport, json.loads(line)) == (api, transport, wanted)
            assert server.wait(10) == 0, server.stderr()
            assert "all scripts consumed" in server.stderr(), (api, transport)
