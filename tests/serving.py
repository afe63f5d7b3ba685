"""`harness serve` as a process for a test, started one way everywhere: the scenario and
options on its command line, the URL read from its first line of output, its stderr in a
file (a pipe nobody reads could fill and stall the server), killed when the test is done."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Served:
    proc: subprocess.Popen[str]
    url: str  # http://127.0.0.1:PORT/v1
    log: Path  # its stderr

    @property
    def host(self) -> str:
        return self.url.removeprefix("http://").removesuffix("/v1").rsplit(":", 1)[0]

    @property
    def port(self) -> int:
        return int(self.url.removesuffix("/v1").rsplit(":", 1)[1])

    def stderr(self) -> str:
        return self.log.read_text(encoding="utf-8")

    def wait(self, timeout: float = 10) -> int:
        return self.proc.wait(timeout)

    def rss(self) -> int:
        """Its resident memory in bytes (Linux)."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise AssertionError("no VmRSS")


@contextlib.contextmanager
def serve_process(
    scenario_id: str, *options: str, log_dir: Path, scenarios: Path | None = None
) -> Iterator[Served]:
    """`harness [--scenarios DIR] serve SCENARIO_ID OPTIONS...`, its stderr in
    log_dir/serve.stderr."""
    command = [sys.executable, "-m", "harness"]
    command += ["--scenarios", str(scenarios)] if scenarios is not None else []
    command += ["serve", scenario_id, *options]
    log = log_dir / "serve.stderr"
    with log.open("w", encoding="utf-8") as err:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=err, text=True)
    assert proc.stdout is not None
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://"), f"harness serve printed no URL; stderr: {log.read_text()}"
        yield Served(proc, url, log)
    finally:
        proc.kill()
        proc.wait(5)
