"""Running a foreign CLI offline: in a network namespace of its own that has only loopback
(`unshare --net`), where the OS allows, so no socket it opens can leave this machine.

Such a namespace has no route to this one's loopback, where the harness serves the fake.
So the CLI is started through this file, run as a script inside the namespace: it brings
the namespace's `lo` up, listens on 127.0.0.1:PORT there, forwards every connection to the
fake's Unix socket (a file, which namespaces share), and runs the CLI as its child with
the same stdin, stdout and stderr. The CLI sees the fake at http://127.0.0.1:PORT as usual.

This file is run by path with `python -I`, so it imports only the standard library.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import functools
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
from pathlib import Path

_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1
_PR_SET_PDEATHSIG = 1


@functools.cache
def unavailable() -> str | None:
    """Why this machine cannot run a CLI in a loopback-only namespace (None: it can)."""
    if sys.platform != "linux":
        return f"network namespaces are Linux's, and this is {sys.platform}"
    unshare = shutil.which("unshare")
    if unshare is None:
        return "no unshare on PATH (util-linux)"
    try:
        tried = subprocess.run(
            [unshare, "--net", "--", sys.executable, "-I", __file__, "--check"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unshare --net could not be tried ({exc})"
    if tried.returncode != 0:
        why = (tried.stderr.strip().splitlines() or ["no reason given"])[-1]
        return f"unshare --net is not allowed here ({why})"
    return None


def choice() -> bool | None:
    """HARNESS_OFFLINE: 1 requires offline, 0 turns it off, unset: where Linux allows."""
    import os

    setting = os.environ.get("HARNESS_OFFLINE", "")
    if setting not in ("1", "0", ""):
        from harness.contract import AdapterError  # imported here: run as a script, -I

        raise AdapterError(f"HARNESS_OFFLINE={setting}: write 1 (required), 0 (off) or unset")
    return {"1": True, "0": False, "": None}[setting]


def decided(adapter: str, wanted: bool | None) -> tuple[bool, str]:
    """Whether a runtime runs offline (`wanted`: required, off, or None: where Linux
    allows), and where its runtime line says it ran."""
    why_not = unavailable()
    if wanted and why_not:
        from harness.contract import AdapterError  # imported here: run as a script, -I

        raise AdapterError(f"adapter {adapter}: cannot run offline: {why_not}")
    offline = why_not is None if wanted is None else wanted
    if offline:
        return True, "offline (a network namespace with only loopback)"
    return False, f"on this host's network ({why_not})" if why_not else "on this host's network"


def command(unix: Path, port: int, argv: list[str]) -> list[str]:
    """`argv` run in a new network namespace, reaching the fake's `unix` socket as
    127.0.0.1:`port`."""
    unshare = shutil.which("unshare") or "unshare"
    return [unshare, "--net", "--", sys.executable, "-I", __file__, str(unix), str(port), "--",
            *argv]  # fmt: skip


def _flags(sock: socket.socket, name: str) -> int:
    request = struct.pack("16sH", name.encode(), 0)
    return int(struct.unpack("16sH", fcntl.ioctl(sock, _SIOCGIFFLAGS, request)[:18])[1])


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        flags = _flags(sock, "lo")
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH", b"lo", flags | _IFF_UP))


def _routes_out() -> list[str]:
    """The interfaces but loopback that are up here (there must be none). Asked of the
    kernel, not of /sys, which still shows the namespace the mount was made in."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        return [n for _, n in socket.if_nameindex() if n != "lo" and _flags(sock, n) & _IFF_UP]


def _pump(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


def _forward(client: socket.socket, unix: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(unix)
    except OSError:
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _serve(listener: socket.socket, unix: str) -> None:
    while True:
        client, _ = listener.accept()
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=_forward, args=(client, unix), daemon=True).start()


def _die_with_parent() -> None:
    # The CLI must not outlive this bridge: the harness stops a run by stopping the bridge.
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def main(args: list[str]) -> int:
    if args == ["--check"]:
        _loopback_up()
        up = _routes_out()
        if up:
            print(f"interfaces other than lo are up: {', '.join(up)}", file=sys.stderr)
        return 1 if up else 0
    if len(args) < 4 or args[2] != "--":
        print("usage: offline.py UNIX_SOCKET PORT -- COMMAND ...", file=sys.stderr)
        return 2
    unix, port, argv = args[0], int(args[1]), args[3:]
    _loopback_up()
    if up := _routes_out():
        print(f"harness offline bridge: interfaces other than lo are up: {up}", file=sys.stderr)
        return 2
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(128)
    threading.Thread(target=_serve, args=(listener, unix), daemon=True).start()
    child = subprocess.Popen(argv, preexec_fn=_die_with_parent)
    signal.signal(signal.SIGTERM, lambda *_: child.terminate())
    return child.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
