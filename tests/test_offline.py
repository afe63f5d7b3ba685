"""The suite is offline by design (tests/_offline.py): loopback works, anything else is
refused by name, and a refused attempt fails its test even when the exception is swallowed.

No test here can send a packet off loopback even if the guard were broken: every test that
tries one first swaps the guard's `real` functions for sentinels that raise.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests import _offline
from tests._offline import OffLoopbackConnection, OffLoopbackLookup, expecting_violations

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
OFF = "192.0.2.1"  # TEST-NET-1 (RFC 5737): documentation only, never routed
OFF_NAME = "example.com"
WHY = "offline by design"
METHODS = {"connect", "connect_ex", "sendto", "sendmsg"}  # the rest of `real` takes a host first
FORWARD = {"getaddrinfo", "gethostbyname", "gethostbyname_ex"}


def _literal(host: object) -> bool:
    try:
        return isinstance(host, str) and bool(ipaddress.ip_address(host))
    except ValueError:
        return False


# Inner runs load this plugin and nothing else installed: autoloading the others costs a
# second a run, and the harness plugin keeps the snapshot root in a class attribute that an
# inner configure would point at a temp dir for the rest of this worker's session.
INNER = ("-p", "tests._offline", "-p", "no:harness", "-p", "no:cacheprovider")


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    return pytester


def sentinel(name: str, original: Callable[..., Any], refused: list[str]) -> Callable[..., Any]:
    """Stands in for `real.<name>`: lets only 127.0.0.1, AF_UNIX and lookups of address
    literals through to the original, by its own check rather than the guard's."""

    def gate(*args: Any, **kwargs: Any) -> Any:
        if name in METHODS:
            sock, address = args[0], args[-1]
            local = sock.family == socket.AF_UNIX or (
                isinstance(address, tuple) and address[0] == "127.0.0.1"
            )
        elif name in FORWARD:  # an address literal is parsed, never looked up
            local = args[0] is None or _literal(args[0])
        else:
            local = args[0] == "127.0.0.1"
        if local:
            return original(*args, **kwargs)
        refused.append(f"{name}{args}")
        raise AssertionError(f"the guard let {name} through to the real network: {args}")

    return gate


@pytest.fixture
def no_real_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The guard's `real` functions behind sentinels, so a broken guard fails the test
    instead of reaching the network. Yields what they refused, which must stay empty."""
    assert _offline.installed(), "the offline plugin is not guarding this process"
    refused: list[str] = []
    for f in fields(_offline.real):
        original = getattr(_offline.real, f.name)
        monkeypatch.setattr(_offline.real, f.name, sentinel(f.name, original, refused))
    yield refused
    assert refused == [], f"the guard fell through to the real functions: {refused}"


# -- loopback is fine ------------------------------------------------------------------------
@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "127.8.9.10"])
def test_loopback_tcp_connects(host: str) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    bind = "127.0.0.1" if host == "localhost" else host
    with socket.socket(family) as server:
        server.bind((bind, 0))
        server.listen()
        port = server.getsockname()[1]
        with socket.create_connection((host, port), timeout=5) as client:
            peer, _ = server.accept()
            with peer:
                client.sendall(b"ping")
                assert peer.recv(4) == b"ping"


def test_loopback_udp_unix_and_asyncio_work() -> None:
    with (
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as server,
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client,
    ):
        server.bind(("127.0.0.1", 0))
        client.sendto(b"1", server.getsockname())
        client.sendmsg([b"2"], [], 0, server.getsockname())
        assert client.connect_ex(server.getsockname()) == 0
        client.send(b"3")
        assert [server.recv(1) for _ in range(3)] == [b"1", b"2", b"3"]
    with (
        tempfile.TemporaryDirectory() as tmp,  # short: AF_UNIX paths are ~108 bytes at most
        socket.socket(socket.AF_UNIX) as server,
        socket.socket(socket.AF_UNIX) as client,
    ):
        server.bind(f"{tmp}/s")
        server.listen()
        client.connect(f"{tmp}/s")

    async def echo() -> bytes:  # a loop runs on a socketpair, and resolves in a thread
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write(b"pong")
            writer.close()

        async with await asyncio.start_server(handle, "localhost", 0) as server:
            port = server.sockets[0].getsockname()[1]
            reader, writer = await asyncio.open_connection("localhost", port)
            data = await reader.readexactly(4)
            writer.close()
            await writer.wait_closed()
            return data

    assert asyncio.run(echo()) == b"pong"


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "::1", None, "0.0.0.0", "::"])
def test_loopback_and_bind_lookups_are_answered(host: str | None) -> None:
    assert socket.getaddrinfo(host, 80, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)


LOOPBACK = ["127.0.0.1", "127.255.0.9", "::1", "::ffff:127.0.0.1", "LOCALHOST.", b"localhost"]
NOT_LOOPBACK = [
    OFF,
    f"::ffff:{OFF}",
    "0.0.0.0",
    "",
    None,
    "localhost.example.com",
    "127.0.0.1.nip.io",
]


@pytest.mark.parametrize(
    ("host", "loopback"), [(h, True) for h in LOOPBACK] + [(h, False) for h in NOT_LOOPBACK]
)
def test_what_counts_as_loopback(host: object, loopback: bool) -> None:
    assert _offline.is_loopback_host(host) is loopback


# -- anything else is refused by name ----------------------------------------------------------
Sockets = Callable[..., socket.socket]


@pytest.fixture
def sockets() -> Iterator[Sockets]:
    """socket.socket(...), closed after the test: attempts below are one-liners."""
    opened: list[socket.socket] = []

    def new(family: int = socket.AF_INET, kind: int = socket.SOCK_STREAM) -> socket.socket:
        opened.append(socket.socket(family, kind))
        return opened[-1]

    yield new
    for sock in opened:
        sock.close()


UDP = (socket.AF_INET, socket.SOCK_DGRAM)
OFF_LOOPBACK: dict[str, Callable[[Sockets], object]] = {
    "connect": lambda new: new().connect((OFF, 9)),
    "connect_ex": lambda new: new().connect_ex((OFF, 9)),
    "sendto": lambda new: new(*UDP).sendto(b"x", (OFF, 9)),
    "sendmsg": lambda new: new(*UDP).sendmsg([b"x"], [], 0, (OFF, 9)),
    "ipv6-mapped": lambda new: new(socket.AF_INET6).connect((f"::ffff:{OFF}", 9, 0, 0)),
    "create_connection": lambda new: socket.create_connection((OFF, 9), timeout=0.1),
    "asyncio": lambda new: asyncio.run(asyncio.open_connection(OFF, 9)),
}
NON_LOOPBACK_NAME: dict[str, Callable[[Sockets], object]] = {
    "getaddrinfo": lambda new: socket.getaddrinfo(OFF_NAME, 443),
    "gethostbyname": lambda new: socket.gethostbyname(OFF_NAME),
    "gethostbyname_ex": lambda new: socket.gethostbyname_ex(OFF_NAME),
    "gethostbyaddr": lambda new: socket.gethostbyaddr(OFF_NAME),
    "getnameinfo": lambda new: socket.getnameinfo((OFF_NAME, 80), 0),
    "connect-by-name": lambda new: new().connect((OFF_NAME, 80)),  # C would resolve it
    "asyncio": lambda new: asyncio.run(asyncio.open_connection(OFF_NAME, 80)),  # in a thread
    "httpx": lambda new: httpx.get(f"http://{OFF_NAME}/", trust_env=False),
}


def refusal(exc: BaseException | None) -> OffLoopbackConnection:
    """The guard's exception, found under whatever a client wrapped it in."""
    while exc is not None and not isinstance(exc, OffLoopbackConnection):
        exc = exc.__cause__ or exc.__context__
    assert exc is not None, "no OffLoopbackConnection in the exception chain"
    return exc


@pytest.mark.parametrize("attempt", OFF_LOOPBACK.values(), ids=OFF_LOOPBACK)
def test_off_loopback_is_refused_by_name(
    attempt: Callable[[Sockets], object], sockets: Sockets, no_real_network: list[str]
) -> None:
    with expecting_violations() as caught, pytest.raises(OSError) as info:
        attempt(sockets)
    assert OFF in str(refusal(info.value)) and WHY in str(refusal(info.value))
    assert len(caught) == 1 and OFF in caught[0]


@pytest.mark.parametrize("lookup", NON_LOOPBACK_NAME.values(), ids=NON_LOOPBACK_NAME)
def test_dns_lookup_of_a_non_loopback_name_is_refused(
    lookup: Callable[[Sockets], object], sockets: Sockets, no_real_network: list[str]
) -> None:
    with expecting_violations() as caught, pytest.raises(Exception) as info:
        lookup(sockets)
    refused = refusal(info.value)
    assert OFF_NAME in str(refused) and WHY in str(refused)
    assert len(caught) == 1 and OFF_NAME in caught[0]
    if lookup is not NON_LOOPBACK_NAME["connect-by-name"]:
        assert isinstance(refused, OffLoopbackLookup) and isinstance(refused, socket.gaierror)


# -- installation -----------------------------------------------------------------------------
def test_installing_again_is_harmless() -> None:
    assert _offline.installed()
    _offline.install()
    try:
        assert _offline.installed()
    finally:
        _offline.uninstall()
    assert _offline.installed(), "an inner uninstall unguarded the session"


def test_the_last_uninstall_restores_the_originals() -> None:
    # In a fresh interpreter: doing this here would leave this worker unguarded for a while.
    code = textwrap.dedent(
        """
        import socket
        before = dict(socket.socket.__dict__), dict(vars(socket))
        from tests import _offline as o
        o.install(); o.install(); o.uninstall()
        assert o.installed()
        o.uninstall(); o.uninstall()
        assert not o.installed()
        assert (dict(socket.socket.__dict__), dict(vars(socket))) == before
        print("restored")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stdout == "restored\n", done.stderr


# -- loud, never hidden: whole inner pytest runs -----------------------------------------------
# An xdist worker is another process, out of reach of `no_real_network`, so the conftest
# swaps in sentinels there itself, before any hook or test of the worker's runs.
CONFTEST = f"""
import socket

from tests import _offline


def fence(name, original):
    def gate(*args, **kwargs):
        address = args[-1] if name in ("connect", "connect_ex", "sendto", "sendmsg") else args
        if address[0] != "127.0.0.1":
            raise AssertionError(f"the guard let {{name}}{{args}} through to the real network")
        return original(*args, **kwargs)

    return gate


def pytest_configure(config):
    if hasattr(config, "workerinput"):
        for name, original in vars(_offline.real).items():
            setattr(_offline.real, name, fence(name, original))


def pytest_sessionstart(session):
    try:
        socket.gethostbyname("{OFF_NAME}")
    except Exception:
        pass
"""
SWALLOWING = f"""
import socket
import threading

import pytest


def test_connect_swallowed():
    with socket.socket() as sock:
        try:
            sock.connect_ex(("{OFF}", 9))
        except Exception:
            pass


def test_sendto_swallowed_in_a_thread():
    def send():
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            try:
                sock.sendto(b"x", ("{OFF}", 53))
            except BaseException:
                pass

    thread = threading.Thread(target=send)
    thread.start()
    thread.join()


def test_lookup_swallowed():
    try:
        socket.getaddrinfo("{OFF_NAME}", 443)
    except Exception:
        pass


@pytest.mark.xfail(reason="an expected failure must not absorb a network attempt")
def test_xfail_does_not_hide_it():
    with socket.socket() as sock:
        try:
            sock.connect(("{OFF}", 9))
        except Exception:
            pass
    assert False


def test_loopback_passes():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        socket.create_connection(server.getsockname(), timeout=5).close()
"""


@pytest.mark.parametrize("xdist", [(), ("-p", "xdist", "-n", "1")], ids=["plain", "xdist"])
def test_an_inner_run_that_swallows_off_loopback_attempts_fails_loudly(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    no_real_network: list[str],
    xdist: tuple[str, ...],
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # for the worker's -p tests._offline
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_swallowing=SWALLOWING)
    result = pytester.runpytest(*INNER, *xdist)
    result.assert_outcomes(failed=4, passed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            f"*connect_ex to ('{OFF}', 9) blocked: *{WHY}*test_connect_swallowed*",
            f"*sendto ('{OFF}', 53) blocked: *{WHY}*test_sendto_swallowed_in_a_thread*",
            f"*DNS lookup (getaddrinfo) of '{OFF_NAME}' blocked: *{WHY}*test_lookup_swallowed*",
            f"*connect to ('{OFF}', 9) blocked: *{WHY}*test_xfail_does_not_hide_it*",
            "*offline by design: attempts outside any test*",
            f"*(gethostbyname) of '{OFF_NAME}' blocked: *{WHY}*",
        ],
        consecutive=False,
    )
    assert "through to the real network" not in result.stdout.str()
    assert _offline.installed(), "the inner session's unconfigure unguarded this one"


def test_an_attempt_while_collecting_is_a_collection_error(
    pytester: pytest.Pytester, no_real_network: list[str]
) -> None:
    pytester.makepyfile(
        test_at_import=f"""
        import socket
        try:
            socket.gethostbyname("{OFF_NAME}")
        except Exception:
            pass

        def test_never_runs():
            pass
        """
    )
    result = pytester.runpytest(*INNER)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*gethostbyname) of '{OFF_NAME}' blocked: *{WHY}*"])
