"""A CLI release that asks for a newer Node than the one on PATH (its lockfile's `engines`:
Qwen Code 0.24.4 and Claude Code 2.1.332 want 22, Debian ships 20) runs on the toolchain's
(adapters/toolchain, harness.adapters._node): first on its PATH for its install scripts and
each run, and named in its runtime line. One that asks for no more runs on PATH's node, as
before; without a Node new enough it is refused in one line."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from harness.adapters import _node as node
from harness.adapters import _offline as offline
from harness.adapters._node import engines_node
from harness.adapters.clis import adapter as cli_adapter
from harness.adapters.clis.qwen_code import QwenCode
from harness.contract import AdapterError

NODE20, NODE22 = "/usr/bin/node", "/opt/node22/bin/node"
BARE = "/usr/local/bin:/usr/bin:/bin"


def lockfile(folder: Path, engines: object, *, pins: int = 1) -> Path:
    """A package-lock.json pinning `pins` packages, the first with `engines` (None: none)."""
    names = [f"some-cli-{i}" for i in range(pins)]
    packages: dict[str, Any] = {"": {"dependencies": {n: "1.2.3" for n in names}}}
    for name in names:
        packages[f"node_modules/{name}"] = {"version": "1.2.3"}
    if engines is not None:
        packages[f"node_modules/{names[0]}"]["engines"] = engines
    path = folder / "package-lock.json"
    path.write_text(json.dumps({"lockfileVersion": 3, "packages": packages}), "utf-8")
    return path


def made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wanted: str, toolchain: str | None
) -> tuple[QwenCode, list[dict[str, str]], list[tuple[int, int]]]:
    """Qwen Code on a folder of its own whose lockfile wants `wanted`, with node 20.19 on
    PATH and `toolchain` as the Node the toolchain gives; its install and asks recorded."""
    installs: list[dict[str, str]] = []
    asked: list[tuple[int, int]] = []

    def node_at_least(least: tuple[int, int], adapter: str) -> str | None:
        asked.append(least)
        return toolchain

    monkeypatch.setattr(node, "node_at_least", node_at_least)
    versions = {NODE20: (20, 19), NODE22: (22, 23)}
    monkeypatch.setattr(node, "version", lambda found: versions[found])
    monkeypatch.setattr(cli_adapter, "node_version", lambda found: versions[found])
    monkeypatch.setattr(node, "install", lambda *a, env: installs.append(env))
    monkeypatch.setattr("harness.adapters._node.shutil.which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(offline, "unavailable", lambda: "not probed here")  # a process
    pin = {"dependencies": {"some-cli-0": "1.2.3"}}
    (tmp_path / "package.json").write_text(json.dumps(pin), "utf-8")
    lockfile(tmp_path, {"node": wanted})
    (tmp_path / "node_modules" / ".bin").mkdir(parents=True)
    (tmp_path / "node_modules" / ".bin" / QwenCode.program).touch()
    return QwenCode(tmp_path, offline=False), installs, asked


def test_a_release_that_wants_node_22_installs_and_runs_on_the_toolchains(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    qwen, installs, asked = made(tmp_path, monkeypatch, ">=22.0.0", NODE22)
    assert asked == [(22, 0)]
    run: Any = SimpleNamespace(folder=tmp_path)
    assert qwen.bare_environment(run, tmp_path / "home")["PATH"] == f"/opt/node22/bin:{BARE}"
    (env,) = installs
    assert env["PATH"].startswith("/opt/node22/bin:")
    assert qwen.runtime.startswith("Qwen Code (some-cli-0 1.2.3, on Node 22.23), ")


def test_a_release_the_node_on_path_serves_runs_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    qwen, installs, asked = made(tmp_path, monkeypatch, ">=20.0.0", NODE22)
    assert asked == []
    run: Any = SimpleNamespace(folder=tmp_path)
    assert qwen.bare_environment(run, tmp_path / "home")["PATH"] == BARE
    assert "/opt/node22" not in installs[0].get("PATH", "")
    assert "Node" not in qwen.runtime


def test_without_a_node_new_enough_it_is_refused_saying_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(AdapterError) as got:
        made(tmp_path, monkeypatch, ">= 22", None)
    assert str(got.value) == (
        "adapter qwen-code needs Node.js >= 22.0: the toolchain's (adapters/toolchain) is for "
        "linux-x64 only, and the node on PATH is older; put a newer one first on PATH"
    )


@pytest.mark.parametrize(
    ("engines", "pins", "least"),
    [
        ({"node": ">=22.0.0"}, 1, (22, 0)),
        ({"node": ">= 20.17"}, 1, (20, 17)),
        ({"node": ">=v18"}, 1, (18, 0)),
        ({"node": "^20.17.0 || >=22.9.0"}, 1, None),  # a range it does not read: PATH's node
        ({}, 1, None),
        (None, 1, None),
        ({"node": ">=22"}, 2, None),  # not one pinned package
    ],
)
def test_the_least_node_is_read_from_the_pinned_packages_engines(
    tmp_path: Path, engines: object, pins: int, least: tuple[int, int] | None
) -> None:
    assert engines_node(lockfile(tmp_path, engines, pins=pins)) == least


def test_a_missing_or_broken_lockfile_asks_for_nothing(tmp_path: Path) -> None:
    assert engines_node(tmp_path / "none.json") is None
    (tmp_path / "bad.json").write_text("{", "utf-8")
    assert engines_node(tmp_path / "bad.json") is None
