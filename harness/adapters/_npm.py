"""A foreign runtime installed from npm: its folder under adapters/, and its install from a
lockfile with integrity hashes into an ignored folder there, once (redone when the
lockfile changes), with nothing of the user's home read or written."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

from harness._paths import repository_root
from harness.contract import AdapterError


def adapter_dir(name: str, marker: str, scenarios: Path | None) -> Path:
    """adapters/NAME beside the scenarios being run (a checkout that vendors both), else in
    the checkout this harness runs from: the first that has `marker`."""
    candidates = [scenarios.resolve().parent / "adapters" / name] if scenarios else []
    checkout = repository_root()
    candidates += [checkout / "adapters" / name] if checkout else []
    for candidate in candidates:
        if (candidate / marker).is_file():
            return candidate
    looked = ", ".join(str(c) for c in candidates) or "no checkout (installed as a wheel)"
    raise AdapterError(
        f"adapter {name}: no adapters/{name}/{marker} found (looked in {looked}); run "
        "from a clone of keyless-harness, or give --scenarios a checkout that has it"
    )


def npm_settings(root: Path) -> dict[str, str]:
    """npm's (and pnpm's) cache, logs and user configuration, inside the adapter's folder;
    and a home of the install's own there, with its XDG dirs, for what a package's
    postinstall writes (opencode-ai's runs `opencode --version`, which makes opencode's
    config, data, cache and state dirs under $HOME: the user's, otherwise)."""
    return {
        "npm_config_cache": str(root / ".npm-cache"),
        "npm_config_userconfig": str(root / ".npmrc-user"),  # none: nothing is configured
        "npm_config_update_notifier": "false",
        **home_dirs(root / ".install-home"),
    }


def home_dirs(home: Path) -> dict[str, str]:
    """HOME, and the XDG dirs under their usual names inside it: a program that honours them
    writes its config, data, cache and state in `home`, whatever the user's are."""
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
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
    if hashlib.sha256(lockfile.read_bytes()).hexdigest() != digest:
        # `npm install` (where `npm ci` cannot be used) must install the lockfile as it is.
        raise AdapterError(f"adapter {adapter}: {what} changed {lockfile.name}; restore it")
    marker.write_text(digest + "\n")
