"""A CLI's own build as the runtime under test (`--adapter NAME@PATH`): a checkout's built
entry point (a `.js` file, run on Node) or a binary, run in place of the release the
adapter pins, with nothing installed. This is how a runtime's own CI gates a branch: build
it, then `harness run --adapter NAME@./path/to/built/cli`. The runtime line names the path
and the version the build says it is, which picks the entries of the adapter's expectations
file that apply to it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from harness.adapters._expectations import RELEASE
from harness.adapters._node import first_on_path, node_at_least
from harness.adapters._node import version as node_version
from harness.contract import AdapterError

_RELEASE = re.compile(RELEASE)
_SCRIPTS = (".js", ".mjs", ".cjs")
# Long enough for a cold start of any of them on a busy machine; it asks for a version,
# not for a scenario, so no scenario is judged by this clock.
_VERSION_WAIT = 120


def is_build(version: str) -> bool:
    """Whether `NAME@X` names a build (a path) rather than a release."""
    return "/" in version or version.startswith(".") or version.endswith(_SCRIPTS)


@dataclass
class Build:
    """A local build, ready to start: `cli` is what an adapter runs (the binary, or a
    launcher that runs the entry point on `node`), `release` what it says it is."""

    path: Path
    cli: Path
    release: str
    node: str | None
    folder: Path  # the launcher's, removed by `close`

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def located(adapter: str, given: str) -> Path:
    """The build's file, or AdapterError saying why it cannot be run (before anything
    else is started)."""
    path = Path(given).expanduser().resolve()
    if not path.is_file():
        raise AdapterError(
            f"--adapter {adapter}@{given}: no file at {path}; give the build's entry point "
            "(e.g. dist/cli.js) or its binary"
        )
    if path.suffix not in _SCRIPTS and not os.access(path, os.X_OK):
        raise AdapterError(f"--adapter {adapter}@{given}: {path} is not executable; chmod +x it")
    return path


def local_build(adapter: str, given: str, program: str) -> Build:
    path = located(adapter, given)
    script = path.suffix in _SCRIPTS
    manifest = _manifest(path)
    node = _node(adapter, manifest) if script else None
    folder = Path(tempfile.mkdtemp(prefix=f"keyless-harness-build-{adapter}-"))
    cli = path
    if script:
        # What the adapter runs is one executable, whatever the entry point's mode bits.
        cli = folder / program
        runner = node or shutil.which("node") or "node"
        cli.write_text(f'#!/bin/sh\nexec "{runner}" "{path}" "$@"\n', encoding="utf-8")
        cli.chmod(0o755)
    try:
        release = _release(adapter, given, cli, node, folder, manifest)
    except AdapterError:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return Build(path, cli, release, node, folder)


def _manifest(path: Path) -> dict[str, object]:
    """The nearest package.json above the entry point (a checkout's package), if any."""
    for folder in path.parents:
        candidate = folder / "package.json"
        if candidate.is_file():
            try:
                found = json.loads(candidate.read_text("utf-8"))
            except ValueError:
                return {}
            return found if isinstance(found, dict) else {}
    return {}


def _node(adapter: str, manifest: dict[str, object]) -> str | None:
    """The toolchain's Node when the package's `engines` ask for more than PATH's has."""
    engines = manifest.get("engines")
    wanted = engines.get("node", "") if isinstance(engines, dict) else ""
    found = re.search(r"(\d+)(?:\.(\d+))?", str(wanted))
    on_path = shutil.which("node")
    if found is None:
        return None
    least = (int(found[1]), int(found[2] or 0))
    if on_path is not None and node_version(on_path) >= least:
        return None
    return node_at_least(least, adapter)


def _release(
    adapter: str, given: str, cli: Path, node: str | None, folder: Path, manifest: dict[str, object]
) -> str:
    """What the build says it is (`--version`), else its package.json's version."""
    home = folder / "home"
    home.mkdir()
    env = {"PATH": first_on_path(node, "/usr/local/bin:/usr/bin:/bin"), "HOME": str(home),
           "TMPDIR": str(folder), "LANG": "C.UTF-8", "TERM": "dumb"}  # fmt: skip
    try:
        done = subprocess.run([str(cli), "--version"], capture_output=True, text=True, env=env,
                              stdin=subprocess.DEVNULL, timeout=_VERSION_WAIT)  # fmt: skip
        said = _RELEASE.search(done.stdout) if done.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired):
        said = None
    if said is not None:
        return said[0]
    version = manifest.get("version")
    if isinstance(version, str) and _RELEASE.fullmatch(version):
        return version
    raise AdapterError(
        f"--adapter {adapter}@{given}: cannot tell which release this build is (`--version` "
        "printed none, and no package.json above it has a version); is it the CLI's entry point?"
    )
