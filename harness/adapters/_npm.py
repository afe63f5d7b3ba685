"""Installing a foreign runtime from npm: from a lockfile with integrity hashes, into an
ignored folder beside its adapter, once (redone when the lockfile changes), and with
nothing of the user's home read or written."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

from harness.contract import AdapterError


def npm_settings(root: Path) -> dict[str, str]:
    """npm's (and pnpm's) cache, logs and user configuration, inside the adapter's folder."""
    return {
        "npm_config_cache": str(root / ".npm-cache"),
        "npm_config_userconfig": str(root / ".npmrc-user"),  # none: nothing is configured
        "npm_config_update_notifier": "false",
    }


def install(
    adapter: str,
    where: Path,
    what: str,
    command: list[str],
    lockfile: Path,
    env: dict[str, str] | None = None,
) -> None:
    """Run `command` in `where` unless node_modules was installed from this very lockfile."""
    digest = hashlib.sha256(lockfile.read_bytes()).hexdigest()
    marker = where / "node_modules" / ".keyless-harness-lock"
    if marker.is_file() and marker.read_text().strip() == digest:
        return
    print(f"harness: installing adapters/{adapter}: {what}", file=sys.stderr, flush=True)
    done = subprocess.run(command, cwd=where, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        tail = " | ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
        raise AdapterError(f"adapter {adapter}: {what} failed ({tail})")
    marker.write_text(digest + "\n")
