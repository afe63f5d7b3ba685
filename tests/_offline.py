"""pytest plugin: the suite is offline by design.

While it is configured, a socket may reach loopback (127.0.0.0/8, ::1, `localhost`) or a
local family (AF_UNIX, AF_NETLINK) and nothing else: `connect`, `connect_ex`, `sendto` and
`sendmsg` to any other address, and DNS lookups of any other name, raise
`OffLoopbackConnection` (or its subclass `OffLoopbackLookup`) before the operating system
sees them. Every blocked attempt is also recorded, and the test (or collection) during
which it happened fails in `pytest_runtest_makereport`, so code that swallows the
exception cannot hide it; not even an xfail marker can.

The guarded functions call the originals through `real`, which tests swap for sentinels so
that a broken guard could never send a packet. Installing is reference-counted: an
in-process `pytester` run configures the plugin a second time, and its unconfigure must not
unguard the outer session. Violations go to the innermost configured session.

Not covered: code that bound `socket.getaddrinfo` (or another guarded function) to its own
name before the plugin was configured, and raw `_socket.socket` objects.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import threading
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

LOOPBACK_NAMES = frozenset({"localhost"})
LOCAL_FAMILIES = frozenset(
    getattr(socket, name) for name in ("AF_UNIX", "AF_NETLINK") if hasattr(socket, name)
)
WHY = (
    "the test suite is offline by design: only loopback (127.0.0.0/8, ::1, localhost) and "
    "AF_UNIX are reachable"
)


class OffLoopbackConnection(ConnectionError):
    """A socket operation that would have left loopback.

    An OSError, so that code takes the path a refused connection takes (create_connection
    closes its socket, httpx wraps it in ConnectError); the record, not the type, keeps
    it loud."""

    def __init__(self, what: str, address: object) -> None:
        shown = address.decode("ascii", "replace") if isinstance(address, bytes) else address
        super().__init__(f"{what} {shown!r} blocked: {WHY}")
        self.address = address


class OffLoopbackLookup(OffLoopbackConnection, socket.gaierror):
    """A DNS lookup of a name that is not loopback; a gaierror, like an unknown name."""


@dataclass
class Real:
    """The functions a guard calls once an address passed; tests swap them for sentinels."""

    connect: Callable[..., Any] = socket.socket.connect
    connect_ex: Callable[..., Any] = socket.socket.connect_ex
    sendto: Callable[..., Any] = socket.socket.sendto
    sendmsg: Callable[..., Any] = socket.socket.sendmsg
    getaddrinfo: Callable[..., Any] = socket.getaddrinfo
    gethostbyname: Callable[..., Any] = socket.gethostbyname
    gethostbyname_ex: Callable[..., Any] = socket.gethostbyname_ex
    gethostbyaddr: Callable[..., Any] = socket.gethostbyaddr
    getnameinfo: Callable[..., Any] = socket.getnameinfo


real = Real()


# -- the policy ---------------------------------------------------------------------------
def _text(host: object) -> str | None:
    if isinstance(host, bytes | bytearray):
        return bytes(host).decode("ascii", "replace").strip().lower().rstrip(".")
    return host.strip().lower().rstrip(".") if isinstance(host, str) else None


def _ip(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(name.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped  # ::ffff:127.0.0.1 is loopback; ipaddress disagrees < 3.13
    return address


def is_loopback_host(host: object) -> bool:
    """Whether `host` names this machine's loopback: `localhost` or a loopback address."""
    name = _text(host)
    if name is None:
        return False
    address = _ip(name)
    return address.is_loopback if address is not None else name in LOOPBACK_NAMES


def _resolves_locally(host: object) -> bool:
    """Whether a forward lookup of `host` stays on this machine: a loopback name, an address
    literal (parsed, never looked up; a connect to it is checked on its own) or None."""
    name = _text(host)
    return host is None or (name is not None and (is_loopback_host(name) or _ip(name) is not None))


def _check_peer(sock: socket.socket, address: object, what: str) -> None:
    if sock.family in LOCAL_FAMILIES:
        return
    inet = sock.family in (socket.AF_INET, socket.AF_INET6)
    if inet and isinstance(address, tuple) and address and is_loopback_host(address[0]):
        return
    _refuse(OffLoopbackConnection(what, address))


def _check_lookup(host: object, what: str) -> None:
    if not _resolves_locally(host):
        _refuse(OffLoopbackLookup(what, host))


def _check_reverse(host: object, what: str) -> None:
    if not is_loopback_host(host):
        _refuse(OffLoopbackLookup(what, host))


# -- the guards ---------------------------------------------------------------------------
def _connect(sock: socket.socket, address: Any, /) -> None:
    _check_peer(sock, address, "connect to")
    real.connect(sock, address)


def _connect_ex(sock: socket.socket, address: Any, /) -> int:
    _check_peer(sock, address, "connect_ex to")
    return int(real.connect_ex(sock, address))


def _sendto(sock: socket.socket, data: Any, /, *rest: Any) -> int:
    _check_peer(sock, rest[-1] if rest else None, "sendto")
    return int(real.sendto(sock, data, *rest))


def _sendmsg(sock: socket.socket, buffers: Any, /, *rest: Any) -> int:
    if len(rest) >= 3:  # (ancdata, flags, address): without one it goes to the connected peer
        _check_peer(sock, rest[2], "sendmsg to")
    return int(real.sendmsg(sock, buffers, *rest))


def _getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
    _check_lookup(host, "DNS lookup (getaddrinfo) of")
    return real.getaddrinfo(host, port, *args, **kwargs)


def _gethostbyname(host: Any, /) -> Any:
    _check_lookup(host, "DNS lookup (gethostbyname) of")
    return real.gethostbyname(host)


def _gethostbyname_ex(host: Any, /) -> Any:
    _check_lookup(host, "DNS lookup (gethostbyname_ex) of")
    return real.gethostbyname_ex(host)


def _gethostbyaddr(host: Any, /) -> Any:
    _check_reverse(host, "reverse DNS lookup (gethostbyaddr) of")
    return real.gethostbyaddr(host)


def _getnameinfo(sockaddr: Any, flags: Any, /) -> Any:
    host = sockaddr[0] if isinstance(sockaddr, tuple) and sockaddr else sockaddr
    _check_reverse(host, "reverse DNS lookup (getnameinfo) of")
    return real.getnameinfo(sockaddr, flags)


_METHODS: dict[str, Callable[..., Any]] = {
    "connect": _connect,
    "connect_ex": _connect_ex,
    "sendto": _sendto,
    "sendmsg": _sendmsg,
}
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "getaddrinfo": _getaddrinfo,
    "gethostbyname": _gethostbyname,
    "gethostbyname_ex": _gethostbyname_ex,
    "gethostbyaddr": _gethostbyaddr,
    "getnameinfo": _getnameinfo,
}
_MISSING = object()


@dataclass
class _Installation:
    count: int = 0
    methods: dict[str, object] = field(default_factory=dict)  # socket.socket.__dict__ entries
    functions: dict[str, object] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


_installation = _Installation()


def install() -> None:
    """Guard the socket module. Reference-counted: each call needs one `uninstall`."""
    with _installation.lock:
        _installation.count += 1
        if _installation.count > 1:
            return
        for name, guard in _METHODS.items():
            # Most are inherited from _socket.socket; restoring means deleting, not setting.
            _installation.methods[name] = socket.socket.__dict__.get(name, _MISSING)
            setattr(socket.socket, name, guard)
        for name, guard in _FUNCTIONS.items():
            _installation.functions[name] = getattr(socket, name)
            setattr(socket, name, guard)


def uninstall() -> None:
    """Undo one `install`; the last one puts back exactly what was there before."""
    with _installation.lock:
        if _installation.count == 0:
            return
        _installation.count -= 1
        if _installation.count:
            return
        for name, original in _installation.methods.items():
            if original is _MISSING:
                delattr(socket.socket, name)
            else:
                setattr(socket.socket, name, original)
        for name, original in _installation.functions.items():
            setattr(socket, name, original)
        _installation.methods.clear()
        _installation.functions.clear()


def installed() -> bool:
    return all(getattr(socket.socket, n) is g for n, g in _METHODS.items()) and all(
        getattr(socket, n) is g for n, g in _FUNCTIONS.items()
    )


# -- recording: loud even when the exception is swallowed ----------------------------------
@dataclass
class _Recorder:
    where: str | None = None  # the node running now; None between tests
    pending: list[str] = field(default_factory=list)  # for `where`, not yet reported
    outside: list[str] = field(default_factory=list)  # no node was running
    expecting: list[list[str]] = field(default_factory=list)

    def note(self, message: str) -> None:
        if self.expecting:
            self.expecting[-1].append(message)
        elif self.where is None:
            self.outside.append(message)
        else:
            self.pending.append(f"{message} (in {self.where})")

    def take(self) -> list[str]:
        taken, self.pending = self.pending, []
        return taken


_recorders: list[_Recorder] = []  # one per configured session; in-process pytester nests
_RECORDER = pytest.StashKey[_Recorder]()
_WORKER_KEY = "offline_violations_outside_tests"


def _refuse(exc: OffLoopbackConnection) -> None:
    if _recorders:
        _recorders[-1].note(str(exc))
    raise exc


@contextlib.contextmanager
def expecting_violations() -> Iterator[list[str]]:
    """For the plugin's own tests: violations inside are handed to the caller, who must
    assert on them, instead of failing the running test."""
    if not _recorders:
        raise RuntimeError("the offline plugin is not configured")
    recorder, caught = _recorders[-1], list[str]()
    recorder.expecting.append(caught)
    try:
        yield caught
    finally:
        recorder.expecting.remove(caught)


def _report_text(violations: list[str]) -> str:
    lines = "\n".join(f"  {v}" for v in violations)
    return f"{len(violations)} attempt(s) to leave loopback, failing even if caught:\n{lines}"


def _fail(report: pytest.TestReport | pytest.CollectReport, violations: list[str]) -> None:
    text = _report_text(violations)
    if report.failed and report.longrepr is not None:
        report.sections.append(("offline by design", text))
    else:
        report.outcome = "failed"
        report.longrepr = text
    if hasattr(report, "wasxfail"):
        del report.wasxfail  # an expected failure must not absorb a network attempt


# -- hooks --------------------------------------------------------------------------------
def pytest_configure(config: pytest.Config) -> None:
    if _RECORDER in config.stash:
        return
    install()
    recorder = _Recorder()
    config.stash[_RECORDER] = recorder
    _recorders.append(recorder)


def pytest_unconfigure(config: pytest.Config) -> None:
    recorder = config.stash.get(_RECORDER, None)
    if recorder is None:
        return
    del config.stash[_RECORDER]
    if recorder in _recorders:
        _recorders.remove(recorder)
    uninstall()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    recorder = item.config.stash.get(_RECORDER, None)
    if recorder is None:
        return (yield)
    recorder.where = item.nodeid
    try:
        return (yield)
    finally:
        recorder.where = None
        recorder.outside += recorder.take()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    recorder = item.config.stash.get(_RECORDER, None)
    violations = recorder.take() if recorder is not None else []
    if violations:
        _fail(report, violations)
    return report


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport | None, pytest.CollectReport | None]:
    recorder = collector.config.stash.get(_RECORDER, None)
    if recorder is None:
        return (yield)
    outer, recorder.where = recorder.where, collector.nodeid or "collection"
    try:
        report = yield
    finally:
        recorder.where = outer
    violations = recorder.take()
    if violations and report is not None:
        _fail(report, violations)
    return report


def pytest_sessionfinish(session: pytest.Session) -> None:
    recorder = session.config.stash.get(_RECORDER, None)
    if recorder is None or not recorder.outside:
        return
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
    # An xdist worker's exit status and summary are dropped; its output reaches the controller.
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        output[_WORKER_KEY] = list(recorder.outside)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """xdist, on the controller: take over what a worker saw outside any test."""
    recorder = node.config.stash.get(_RECORDER, None)
    if recorder is not None:
        recorder.outside += getattr(node, "workeroutput", {}).get(_WORKER_KEY, [])


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    recorder = config.stash.get(_RECORDER, None)
    if recorder is not None and recorder.outside:
        terminalreporter.section("offline by design: attempts outside any test", red=True)
        terminalreporter.line(_report_text(recorder.outside))
