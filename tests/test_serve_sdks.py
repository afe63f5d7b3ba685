"""The official openai Node SDK runs a whole delegation against `harness serve`, streamed
and not, with no routing header (the Python SDK's twin is in tests/test_serve.py).

The SDK is installed from tests/fixtures/openai-node's lockfile on first use.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from harness.adapters._node_dsh import npm_settings
from harness.runtime.questions import DELEGATED_CALLER, MESSAGES
from tests.serving import Served

CLIENT = Path(__file__).parent / "fixtures" / "openai-node"

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="node and npm are not on PATH; .ci/run says SKIPPED loudly in that case",
)


@pytest.fixture(scope="session")
def node_sdk() -> Path:
    # One install for every xdist worker: the first takes the lock and installs.
    with (CLIENT / "package-lock.json").open() as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (CLIENT / "node_modules" / "openai" / "package.json").is_file():
            # npm's cache, logs and user configuration kept out of $HOME, as for node-dsh.
            done = subprocess.run(
                ["npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts"],
                cwd=CLIENT, capture_output=True, text=True, timeout=300,
                env={**os.environ, **npm_settings(CLIENT)},
            )  # fmt: skip
            assert done.returncode == 0, f"npm ci in {CLIENT} failed:\n{done.stderr[-2000:]}"
    return CLIENT


@pytest.mark.parametrize("transport", ["json", "sse"])
@pytest.mark.parametrize(
    ("served_id", "dialect", "final"),
    [
        ("grandchild-refused", None, "PARENT_COMPLETED"),
        (
            "parallel-children-refused",
            {"tool": "task", "arguments": {"description": "{name}", "prompt": "{prompt}"}},
            "PARENT_COMPLETED: UNRESOLVED: Should gpu-pool use the CUDA fallback? | "
            "UNRESOLVED: How many threads should cpu-pool use?",
        ),
    ],
    ids=["nested-subagent", "parallel-task-dialect"],
)
def test_the_node_sdk_runs_a_delegation_tree_against_serve(
    node_sdk: Path,
    serve_process: Callable[..., AbstractContextManager[Served]],
    transport: str,
    served_id: str,
    dialect: dict[str, object] | None,
    final: str,
) -> None:
    options = ["--delegation", json.dumps(dialect)] if dialect else []
    with serve_process(served_id, "--idle-timeout", "20", *options) as server:
        tool = str(dialect["tool"]) if dialect else "subagent"
        refusal = "Error: " + MESSAGES[DELEGATED_CALLER]
        ran = subprocess.run(
            ["node", "delegate.mjs", server.url, tool, transport, refusal],
            cwd=node_sdk, capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        assert ran.returncode == 0, ran.stderr[-2000:]
        assert json.loads(ran.stdout) == {"final": final}
        assert server.wait(10) == 0, server.stderr()
        assert "all scripts consumed" in server.stderr()
