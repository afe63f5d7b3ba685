"""Figure 8: `harness serve` on loopback, at 1 and at 16 concurrent clients."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks._measure import now
from benchmarks._report import Check, Section, num

BODY = json.dumps({"model": "m", "messages": [{"role": "user", "content": "go"}]}).encode()
REQUEST = (
    b"POST /v1/chat/completions HTTP/1.1\r\nHost: bench\r\nX-Harness-Agent: lead\r\n"
    b"Content-Type: application/json\r\nContent-Length: "
    + str(len(BODY)).encode()
    + b"\r\n\r\n"
    + BODY
)
P99_AT_16 = 0.050  # seconds: the target


def measure(*, quick: bool, requests: int) -> Section:
    per_client = 20 if quick else requests
    rows, p99s = [], {}
    with tempfile.TemporaryDirectory() as folder:
        steps = 10 + per_client * 17 + 16  # every request below consumes one step
        (Path(folder) / "bench.yaml").write_text(_scenario(steps), "utf-8")
        command = [sys.executable, "-m", "harness", "--scenarios", folder, "serve", "bench",
                   "--idle-timeout", "60"]  # fmt: skip
        with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True) as proc:  # fmt: skip
            assert proc.stdout is not None
            host, port = proc.stdout.readline().strip()[7:-3].rsplit(":", 1)
            try:
                asyncio.run(_clients(host, int(port), 1, 10))  # warm: first connections
                for clients in (1, 16):
                    wall, latencies = asyncio.run(_clients(host, int(port), clients, per_client))
                    latencies.sort()
                    p50 = latencies[len(latencies) // 2]
                    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
                    p99s[clients] = p99
                    rows.append([str(clients), str(len(latencies)), num(len(latencies) / wall),
                                 num(p50 * 1e3), num(p99 * 1e3)])  # fmt: skip
            finally:
                proc.kill()
    section = Section(
        "8. harness serve on loopback",
        f"`harness serve` as a subprocess on a scenario of one root with enough replies; N "
        f"clients in one asyncio process, each on its own keep-alive connection, sending "
        f"{per_client} non-streamed requests one after another (X-Harness-Agent routing, raw "
        "HTTP/1.1 so the client's own cost stays small). Latency from the first byte sent to "
        "the last byte of the body read; requests/s over the whole run.",
    )
    section.tables.append([["clients", "requests", "requests/s", "p50 (ms)", "p99 (ms)"], *rows])
    section.checks.append(
        Check("8 serve p99 at 16 clients", p99s[16], P99_AT_16, f"{num(p99s[16] * 1e3)} ms",
              "<= 50 ms")
    )  # fmt: skip
    return section


def _scenario(steps: int) -> str:
    said = "\n".join(f"      - say: s{i}" for i in range(1, steps + 1))
    return (
        "id: bench\ntitle: Many replies for one root\ncovers: [D1]\nfeatures: [assembled]\n"
        f"agents:\n  lead:\n    script:\n{said}\nphases: [{{start: lead, prompt: go}}]\n"
        "expect: {outcome: completed, answerer_calls: 0}\n"
    )


async def _clients(host: str, port: int, clients: int, count: int) -> tuple[float, list[float]]:
    latencies: list[float] = []

    async def client() -> None:
        reader, writer = await asyncio.open_connection(host, port)
        for _ in range(count):
            began = now()
            writer.write(REQUEST)
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:"))  # fmt: skip
            await reader.readexactly(length)
            latencies.append(now() - began)
            if b" 200 " not in head.split(b"\r\n")[0] + b" ":
                raise AssertionError(head.decode("latin-1"))
        writer.close()

    began = now()
    await asyncio.wait_for(asyncio.gather(*(client() for _ in range(clients))), 120)
    return now() - began, latencies
