"""A foreign runtime installed from npm: its folder under adapters/, and its install from a
lockfile with integrity hashes into an ignored folder there, once (redone when the
lockfile changes), with nothing of the user's home read or written."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from harness._paths import repository_root
from harness.adapters._expectations import is_release
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


def pinned(root: Path) -> str:
    """What adapters/NAME/package.json pins, as a runtime line names it."""
    pins = json.loads((root / "package.json").read_text("utf-8"))["dependencies"]
    return ", ".join(f"{k} {v}" for k, v in sorted(pins.items()))


def installed_version(root: Path) -> str:
    """The version of the one package `root` pins (adapters/NAME/package.json), as
    installed there, else as pinned; "" when it pins more than one."""
    pins = json.loads((root / "package.json").read_text("utf-8"))["dependencies"]
    if len(pins) != 1:
        return ""
    ((package, pinned),) = pins.items()
    manifest = root / "node_modules" / package / "package.json"
    if manifest.is_file():
        return str(json.loads(manifest.read_text("utf-8")).get("version", pinned))
    return str(pinned)


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


RELEASES = ".releases"  # under adapters/NAME: each other release's folder, ignored by git


def release(adapter: str, root: Path, version: str) -> Path:
    """The folder of another `version` of the package `root` pins (adapters/NAME/package.json
    has one dependency): `root/.releases/VERSION`, with a package.json that pins it and a
    lockfile with integrity hashes made once by npm from the registry and kept, so that the
    release installs as strictly as the pin. Nothing of the user's home is read or written."""
    if not is_release(version):
        raise AdapterError(
            f"adapter {adapter}@{version}: not a release; write NAME@MAJOR.MINOR.PATCH, "
            f"e.g. {adapter}@1.2.3"
        )
    (package,) = json.loads((root / "package.json").read_text("utf-8"))["dependencies"]
    folder = root / RELEASES / version
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # xdist workers and parallel runs share one
        lockfile = folder / "package-lock.json"
        if not lockfile.is_file():
            _lock(adapter, folder, package, version)
    return folder


def pin(adapter: str, root: Path, version: str) -> str:
    """Move adapters/NAME (`root`) to `version` of the package it pins: its package.json,
    and its lockfile made by npm from the registry with integrity hashes (nothing
    installed, no install script run). Returns the release it was pinned at before."""
    if not is_release(version):
        raise AdapterError(f"{adapter} {version}: not a release; write MAJOR.MINOR.PATCH")
    manifest_path = root / "package.json"
    manifest = json.loads(manifest_path.read_text("utf-8"))
    ((package, before),) = manifest["dependencies"].items()
    lockfile = root / "package-lock.json"
    kept = {p: p.read_bytes() for p in (manifest_path, lockfile) if p.is_file()}
    manifest["dependencies"] = {package: version}
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", "utf-8")
    lockfile.unlink(missing_ok=True)  # made afresh: none of the old release's tree is kept
    try:
        _lock(adapter, root, package, version, manifest=False)
    except AdapterError:
        for path, data in kept.items():  # the pin as it was: nothing half-moved
            path.write_bytes(data)
        raise
    return str(before)


def _lock(adapter: str, folder: Path, package: str, version: str, manifest: bool = True) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise AdapterError(f"adapter {adapter}@{version} needs npm on PATH, to install it")
    if manifest:
        pinned = {"name": f"keyless-harness-adapter-{adapter}-{version}", "version": "0.0.0",
                  "private": True, "dependencies": {package: version}}  # fmt: skip
        (folder / "package.json").write_text(json.dumps(pinned, indent=2) + "\n", "utf-8")
    print(f"harness: locking adapters/{adapter} at {package}@{version} (from the registry)",
          file=sys.stderr, flush=True)  # fmt: skip
    done = subprocess.run(
        [npm, "install", "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund"],
        cwd=folder, capture_output=True, text=True,
        env={**os.environ, **npm_settings(folder)},
    )  # fmt: skip
    made = folder / "package-lock.json"
    entry = {}
    if done.returncode == 0 and made.is_file():
        entry = json.loads(made.read_text("utf-8"))["packages"].get(f"node_modules/{package}", {})
    if entry.get("version") != version or not str(entry.get("integrity", "")).startswith("sha"):
        made.unlink(missing_ok=True)  # none kept that could be taken for a good one
        tail = " | ".join((done.stderr or done.stdout).strip().splitlines()[-2:])
        raise AdapterError(
            f"adapter {adapter}@{version}: npm could not lock {package}@{version} "
            f"({tail or 'no integrity hash'}); is it a release the registry serves?"
        )


def registry_releases(adapter: str, root: Path) -> list[str]:
    """Every release of the package adapters/NAME pins that the registry serves, oldest
    first, prereleases left out (name one to run it). npm's cache and config stay in the
    adapter's folder."""
    from harness.adapters._expectations import release_key

    npm = shutil.which("npm")
    if npm is None:
        raise AdapterError(f"adapter {adapter} needs npm on PATH, to list its releases")
    (package,) = json.loads((root / "package.json").read_text("utf-8"))["dependencies"]
    done = subprocess.run([npm, "view", package, "versions", "--json"], cwd=root,
                          capture_output=True, text=True,
                          env={**os.environ, **npm_settings(root)})  # fmt: skip
    try:
        listed = json.loads(done.stdout) if done.returncode == 0 else None
    except ValueError:
        listed = None
    if not isinstance(listed, list):
        tail = " | ".join((done.stderr or done.stdout).strip().splitlines()[-2:])
        raise AdapterError(f"adapter {adapter}: npm could not list {package}'s releases ({tail})")
    plain = [str(v) for v in listed if re.fullmatch(r"\d+\.\d+\.\d+", str(v))]
    return sorted(plain, key=release_key)
