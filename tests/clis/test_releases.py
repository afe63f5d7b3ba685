"""Another release of an agent CLI: `--adapter NAME@VERSION` installs it from a lockfile npm
makes once and keeps (adapters/NAME/.releases/VERSION), runs it as the pinned one is run,
judges it by the same known-failures file, and names its version wherever the pin's would
be named."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import cast

import pytest

from harness.adapters import AdapterError, open_adapter
from harness.adapters.clis.codex.adapter import Codex
from harness.adapters.clis.codex.adapter import adapter_dir as codex_dir
from harness.cli import main
from harness.contract import RunOptions
from harness.run import RULE, judge
from tests.conftest import SCENARIOS

# The release before the pin (0.171.0): the same behaviour, another install.
CODEX = "0.170.0"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("node-dsh@0.1.0", "--adapter node-dsh@0.1.0: only an agent CLI installs another "
         "release by version; node-dsh runs its pinned build (its README says how to run "
         "another)"),
        ("reference@1.0.0", "--adapter reference@1.0.0: only an agent CLI installs another "
         "release by version"),
        ("codex@latest", "adapter codex@latest: not a release; write NAME@MAJOR.MINOR.PATCH, "
         "e.g. codex@1.2.3"),
        ("codex@1.2.3;rm", "adapter codex@1.2.3;rm: not a release"),
    ],
)  # fmt: skip
def test_what_is_no_release_is_refused_in_one_line_before_anything_runs(
    spec: str, message: str
) -> None:
    with pytest.raises(AdapterError) as got:
        open_adapter(spec)
    assert str(got.value).startswith(message)


needs_npm = pytest.mark.skipif(
    shutil.which("npm") is None or shutil.which("node") is None,
    reason="a release installs with npm and runs on node; .ci/run says SKIPPED loudly then",
)


@needs_npm
@pytest.mark.cli
def test_another_release_installs_from_a_lockfile_of_its_own_and_runs(tmp_path: Path) -> None:
    adapter = open_adapter(f"codex@{CODEX}")
    assert isinstance(adapter, Codex)
    folder = codex_dir() / ".releases" / CODEX
    assert adapter.root == folder
    lock = json.loads((folder / "package-lock.json").read_text("utf-8"))
    pinned = lock["packages"]["node_modules/@openai/codex"]
    assert pinned["version"] == CODEX and pinned["integrity"].startswith("sha512-")
    # Made once and kept: opened again, it is installed from the same lockfile.
    made = (folder / "package-lock.json").stat().st_mtime_ns
    assert cast(Codex, open_adapter(f"codex@{CODEX}")).root == folder
    assert (folder / "package-lock.json").stat().st_mtime_ns == made
    # The release's own binary, its own name in reports, the pin's known failures.
    shown = subprocess.run([adapter.cli, "--version"], capture_output=True, text=True,
                           env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})  # fmt: skip
    assert shown.stdout.strip() == f"codex-cli {CODEX}"
    assert adapter.name == f"codex@{CODEX}"
    assert adapter.runtime.startswith(f"Codex (@openai/codex {CODEX}), ")
    assert adapter.expectations == codex_dir() / "expectations.yaml"
    scenario = SCENARIOS["delegated-question-handoff"]
    observed = adapter.run(scenario, RunOptions())
    assert (observed.outcome, observed.final["parent"]) == ("completed", "PARENT_COMPLETED")
    assert judge(scenario, observed, RULE).status == "pass"


@needs_npm
@pytest.mark.cli
@pytest.mark.timeout(600)  # the first run installs the release: a minute or more
def test_repro_on_a_release_shows_its_hang(capsys: pytest.CaptureFixture[str]) -> None:
    # Qwen Code as its public report (#7126) saw it: the child's ask waits on a host that
    # never sees it, and the parent on the child.
    assert main(["repro", "--adapter", "qwen-code@0.15.10", "delegated-question-handoff"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(
        "delegated-question-handoff on Qwen Code (@qwen-code/qwen-code 0.15.10)"
    )
    assert "outcome: hang" in out and "wait-for graph:" in out
    assert out[-1].startswith("known fail: With a host as its human (SDK mode")


@needs_npm
@pytest.mark.cli
@pytest.mark.timeout(900)  # two releases, each installed on first use
def test_history_shards_join_into_the_table_one_run_prints(tmp_path: Path) -> None:
    # Qwen Code before and after QwenLM/qwen-code PR #8219: the history marks the release
    # where the child's ask stopped hanging, and its two shards join into the same table.
    common = ["history", "qwen-code", "0.15.10", "0.24.4", "--scenario",
              "delegated-question-handoff", "--format", "json"]  # fmt: skip
    whole, one, two, joined = (tmp_path / f"{n}.json" for n in ("whole", "1", "2", "joined"))
    assert main([*common, "--jobs", "2", "--output", str(whole)]) == 0
    assert main([*common, "--shard", "1/2", "--output", str(one)]) == 0
    assert main([*common, "--shard", "2/2", "--output", str(two)]) == 0
    shards = [json.loads(p.read_text("utf-8")) for p in (one, two)]
    assert [[c["release"] for c in s["releases"]] for s in shards] == [["0.15.10"], ["0.24.4"]]
    assert main(["history", "--merge", str(one), str(two), "--format", "json",
                 "--output", str(joined)]) == 0  # fmt: skip
    table = json.loads(whole.read_text("utf-8"))
    assert json.loads(joined.read_text("utf-8")) == table
    assert [c["cells"]["delegated-question-handoff"] for c in table["releases"]] == [
        "none (hang)", "rule"]  # fmt: skip
    assert table["changes"] == {"delegated-question-handoff": [
        {"release": "0.24.4", "from": "none (hang)", "to": "rule"}]}  # fmt: skip
