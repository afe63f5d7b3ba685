"""Keyless: no credential, endpoint, proxy, netrc or CA setting in the environment reaches
a request, and the harness does not even read one.

Every scenario runs over JSON and SSE with canaries in every variable a model client might
read; no captured request may carry a canary or any auth header, and the observation must
equal the golden snapshot byte for byte. A second pass swaps `os.environ` for a recording
mapping and names whatever read a credential-like variable, with its callers. The fake's
respx router fails loudly on any route or host it does not mock. The last tests feed the
checks leaky clients, so they are shown able to fail.
"""

from __future__ import annotations

import _collections_abc
import asyncio
import base64
import os
import re
import sys
from collections.abc import Iterator, MutableMapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import TypeVar

import httpx
import pytest
import respx

from harness.adapters.reference.batch import batch
from harness.contract import AGENT_HEADER
from harness.fake import BASE_URL, CapturedRequest, ScriptedLLM, Turn
from harness.pytest_plugin import ScenarioSnapshotExtension
from harness.run import Wire, run_scenario, snapshot_text
from harness.runtime.llm import ChatClient, ChatError
from tests.conftest import SCENARIOS

CANARY = "canary-5be1e7"  # distinctive, lower case: matched case-insensitively
WIRES = [Wire(), Wire(stream=True)]
WIRE_IDS = [wire.describe() for wire in WIRES]
CREDENTIALS = [
    *("OPENAI_API_KEY", "OPENAI_ORG_ID", "OPENAI_ORGANIZATION", "OPENAI_PROJECT_ID"),
    *("OPENAI_WEBHOOK_SECRET", "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_AD_TOKEN"),
    *("DEEPSEEK_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_API_KEY"),
    *("GEMINI_API_KEY", "GOOGLE_API_KEY", "MISTRAL_API_KEY", "GROQ_API_KEY"),
    *("TOGETHER_API_KEY", "OPENROUTER_API_KEY", "XAI_API_KEY", "COHERE_API_KEY", "CO_API_KEY"),
    *("FIREWORKS_API_KEY", "PERPLEXITY_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"),
    *("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"),
    *("AWS_BEARER_TOKEN_BEDROCK", "GITHUB_TOKEN", "LLM_API_KEY", "API_KEY", "OPENAI_API_VERSION"),
]
ENDPOINTS = [
    *("OPENAI_BASE_URL", "OPENAI_API_BASE", "AZURE_OPENAI_ENDPOINT", "DEEPSEEK_BASE_URL"),
    *("ANTHROPIC_BASE_URL", "OLLAMA_HOST", "LLM_BASE_URL"),
]
PROXIES = ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"]
PROXY_USERINFO = f"{CANARY}-proxy-user:{CANARY}-proxy-pass"
NETRC_USERINFO = f"{CANARY}-netrc-login:{CANARY}-netrc-password"
# Headers that carry a credential or an account, whatever their value.
FORBIDDEN_HEADERS = frozenset(
    {
        *("authorization", "proxy-authorization", "api-key", "x-api-key", "x-goog-api-key"),
        *("openai-organization", "openai-project", "anthropic-api-key", "cookie"),
    }
)
# Names a credential, proxy, endpoint or CA setting goes by, whoever invented it.
SENSITIVE = re.compile(
    r"KEY|TOKEN|SECRET|PASSW|CRED|AUTH|NETRC|PROXY|BASE_URL|API_BASE|ENDPOINT|_HOST$|CERT"
    r"|CA_BUNDLE|ORG_ID|ORGANIZATION|PROJECT_ID|API_VERSION",
    re.IGNORECASE,
)


def needles() -> list[bytes]:
    """What a leak looks like on the wire: the canary itself, or Basic auth built from one."""
    encoded = [base64.b64encode(u.encode()).lower() for u in (PROXY_USERINFO, NETRC_USERINFO)]
    return [CANARY.encode(), *encoded]


@pytest.fixture
def canary_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, str]:
    """Every variable a model or HTTP client might read, set to a canary; returns them."""
    netrc = tmp_path / "netrc"
    netrc.write_text(
        f"machine {httpx.URL(BASE_URL).host} login {CANARY}-netrc-login "
        f"password {CANARY}-netrc-password\n"
        f"default login {CANARY}-default-login password {CANARY}-default-password\n"
    )
    netrc.chmod(0o600)
    home = tmp_path / "home"
    home.mkdir()
    (home / ".netrc").write_bytes(netrc.read_bytes())
    (home / ".netrc").chmod(0o600)
    bundle = tmp_path / f"{CANARY}-ca.pem"
    bundle.write_text(f"not a certificate: {CANARY}\n")
    env = {name: f"{CANARY}-{name.lower()}" for name in CREDENTIALS}
    env |= {name: f"http://{CANARY}-{name.lower()}.invalid/v1" for name in ENDPOINTS}
    env |= {name: f"http://{PROXY_USERINFO}@{CANARY}-proxy.invalid:3128" for name in PROXIES}
    env |= {"NETRC": str(netrc), "HOME": str(home), "SSL_CERT_DIR": str(tmp_path)}
    env |= {key: str(bundle) for key in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    for name in ("NO_PROXY", "no_proxy"):  # so that a proxy, if read, would apply everywhere
        monkeypatch.delenv(name, raising=False)
    return env


def leaks(requests: Sequence[CapturedRequest]) -> list[str]:
    found = []
    for i, request in enumerate(requests, 1):
        where = f"request {i} (agent {request.agent}, step {request.step})"
        raw = request.raw.lower()
        found += [f"{where}: body carries {n!r}" for n in needles() if n in raw]
        for name, value in request.headers:
            if name.lower() in FORBIDDEN_HEADERS:
                found.append(f"{where}: sends header {name.lower()}")
            text = f"{name}: {value}".lower().encode()
            found += [f"{where}: header {name} carries {n!r}" for n in needles() if n in text]
        hosts = [v for n, v in request.headers if n.lower() == "host"]
        if hosts != [httpx.URL(BASE_URL).host]:
            found.append(f"{where}: sent to host {hosts}, not the fake's")
    return found


def golden(scenario_id: str) -> str:
    return (ScenarioSnapshotExtension.snapshot_root / f"{scenario_id}.json").read_text()


@pytest.mark.parametrize("keyless_wire", WIRES, ids=WIRE_IDS)
def test_no_environment_value_reaches_a_request(
    keyless_wire: Wire, canary_env: dict[str, str]
) -> None:
    # Every scenario in one test, on one loop. Problems are listed by scenario id.
    problems: list[str] = []
    with batch():
        for scenario_id, scenario in sorted(SCENARIOS.items()):
            result = run_scenario(scenario, wire=keyless_wire)
            requests = result.observation.requests
            found = leaks(requests) + result.mismatches
            if len(requests) != result.observation.served:  # kept only the last ones
                found.append(f"{result.observation.served - len(requests)} request(s) unchecked")
            if snapshot_text(result.observation.snapshot()) != golden(scenario_id):
                found.append("the observation differs from its snapshot")
            if not requests and any(agent.script for agent in scenario.agents.values()):
                found.append("nothing was captured, so nothing was checked")
            problems += [f"{scenario_id}: {problem}" for problem in found]
    assert not problems, "\n".join(problems)


# -- who reads the environment ----------------------------------------------------------------
K = TypeVar("K", str, bytes)
# Frames that only relay a read (os.getenv, Mapping.get, this wrapper) are not the reader.
RELAY_FILES = (os.__file__, _collections_abc.__file__, "<frozen ")


def _relays(frame: FrameType) -> bool:
    code = frame.f_code
    return code.co_filename.startswith(RELAY_FILES) or code.co_qualname.startswith(
        "RecordingEnviron."
    )


@dataclass
class Read:
    name: str
    reader: str  # module:function:line of the first frame that is not a relay, and callers

    def __str__(self) -> str:
        return f"{self.name} read by {self.reader}"


@dataclass
class RecordingEnviron(MutableMapping[K, K]):
    """os.environ as it was, except that every variable read is recorded with its reader.
    Iterating or copying reads every variable, which is what the caller then holds."""

    real: MutableMapping[K, K]
    reads: list[Read] = field(default_factory=list)

    def _read(self, key: K) -> None:
        frame: FrameType | None = sys._getframe(2)
        while frame is not None and _relays(frame):
            frame = frame.f_back
        chain: list[str] = []  # the reader, then whoever asked it: urllib alone says little
        modules: set[object] = set()
        while frame is not None and len(modules) < 3:
            module = frame.f_globals.get("__name__")
            if module not in modules:
                modules.add(module)
                chain.append(f"{module}:{frame.f_code.co_name}:{frame.f_lineno}")
            frame = frame.f_back
        reader = " <- ".join(chain)
        name = key.decode(errors="replace") if isinstance(key, bytes) else str(key)
        self.reads.append(Read(name, reader))

    def __getitem__(self, key: K) -> K:
        self._read(key)
        return self.real[key]

    def __setitem__(self, key: K, value: K) -> None:
        self.real[key] = value

    def __delitem__(self, key: K) -> None:
        del self.real[key]

    def __iter__(self) -> Iterator[K]:
        keys = list(self.real)
        for key in keys:
            self._read(key)
        return iter(keys)

    def __len__(self) -> int:
        return len(self.real)

    def copy(self) -> dict[K, K]:
        return {key: self[key] for key in list(self.real)}

    def sensitive(self) -> list[str]:
        return sorted({str(r) for r in self.reads if SENSITIVE.search(r.name)})


@contextmanager
def recording(monkeypatch: pytest.MonkeyPatch) -> Iterator[RecordingEnviron[str]]:
    """os.environ (and os.environb, which code may read instead) recorded for the block."""
    text: RecordingEnviron[str] = RecordingEnviron(os.environ)
    raw: RecordingEnviron[bytes] = RecordingEnviron(os.environb, reads=text.reads)
    with monkeypatch.context() as patch:
        patch.setattr(os, "environ", text)
        patch.setattr(os, "environb", raw)
        yield text


@pytest.mark.parametrize("keyless_wire", WIRES, ids=WIRE_IDS)
def test_the_harness_reads_no_credential_proxy_or_endpoint_variable(
    keyless_wire: Wire, canary_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every scenario in one test, on one loop; the loop is made inside the recording, so
    # asyncio's own start is watched too.
    found: dict[str, list[str]] = {}
    failed: dict[str, list[str]] = {}
    with recording(monkeypatch) as environ, batch():
        for scenario_id, scenario in sorted(SCENARIOS.items()):
            del environ.reads[:]  # in place: os.environb's recorder shares the list
            result = run_scenario(scenario, wire=keyless_wire)
            if environ.sensitive():
                found[scenario_id] = environ.sensitive()
            if result.status != "pass":
                failed[scenario_id] = result.mismatches
    # First: a read explains a failure better than the failure does.
    assert not found, "\n".join(
        f"{read}  ({', '.join(ids)})" for read, ids in _by_read(found).items()
    )
    assert failed == {}


def _by_read(found: dict[str, list[str]]) -> dict[str, list[str]]:
    """Scenario ids by read: most scenarios read the same variables from the same places."""
    out: dict[str, list[str]] = {}
    for scenario_id, reads in found.items():
        for read in reads:
            out.setdefault(read, []).append(scenario_id)
    return out


# -- the fake is the only endpoint, and says so loudly ------------------------------------------
@pytest.mark.parametrize(
    "url",
    [f"{BASE_URL}/models", f"{BASE_URL}/completions", "http://example.com/v1/chat/completions"],
)
def test_the_fakes_router_refuses_any_unmocked_request(url: str) -> None:
    llm = ScriptedLLM({"lead": [Turn.text("hi")]})
    with (
        httpx.Client(transport=httpx.MockTransport(llm.router().handler)) as client,
        pytest.raises(respx.models.AllMockedAssertionError, match="not mocked"),
    ):
        client.post(url, json={"messages": []}, headers={"X-Harness-Agent": "lead"})
    assert llm.requests == []


def test_the_runtime_client_pointed_elsewhere_fails_loudly() -> None:
    llm = ScriptedLLM({"lead": [Turn.text("hi")]})

    async def go() -> None:
        async with httpx.AsyncClient(transport=llm.transport(), trust_env=False) as http:
            chat = ChatClient(
                http, base_url="http://elsewhere.invalid/v1", agent_header=AGENT_HEADER
            )
            await chat.complete(agent="lead", messages=[], tools=[])

    # An assertion, not an httpx error: the runtime cannot mistake it for a model's refusal.
    with pytest.raises(respx.models.AllMockedAssertionError, match=r"elsewhere\.invalid"):
        asyncio.run(go())
    assert llm.requests == []


# -- the checks can fail ------------------------------------------------------------------------
def _one_request(
    client: httpx.AsyncClient, llm: ScriptedLLM, model: str = "scripted"
) -> str | None:
    """Send one request; the fake's refusal, if it refused it (never repeating a key)."""

    async def go() -> None:
        async with client:
            await ChatClient(
                client, base_url=BASE_URL, model=model, agent_header=AGENT_HEADER
            ).complete(agent="lead", messages=[{"role": "user", "content": "go"}], tools=[])

    try:
        asyncio.run(go())
    except ChatError as exc:
        assert CANARY not in str(exc) and NETRC_USERINFO not in str(exc)
        return str(exc)
    finally:
        assert len(llm.requests) == 1
    return None


FOREIGN = "header authorization carries a credential that is not the harness's sentinel key"


def test_a_key_from_the_environment_is_caught(canary_env: dict[str, str]) -> None:
    llm = ScriptedLLM({"lead": [Turn.text("hi")]})
    headers = {"Authorization": f"Bearer {os.environ['OPENAI_API_KEY']}"}
    refused = _one_request(httpx.AsyncClient(transport=llm.transport(), headers=headers), llm)
    assert refused is not None and refused.startswith(FOREIGN)  # the fake refuses it, and
    found = leaks(llm.requests)  # the audit of what was sent names it
    assert any("sends header authorization" in f for f in found), found
    assert any(f"carries {CANARY.encode()!r}" in f for f in found), found


def test_an_account_in_an_innocent_header_or_the_body_is_caught(
    canary_env: dict[str, str],
) -> None:
    llm = ScriptedLLM({"lead": [Turn.text("hi")]})
    headers = {"X-Tenant": os.environ["OPENAI_PROJECT_ID"]}
    client = httpx.AsyncClient(transport=llm.transport(), headers=headers)
    # Not a credential header: only the audit can tell.
    assert _one_request(client, llm, model=os.environ["OPENAI_ORG_ID"]) is None
    found = leaks(llm.requests)
    assert any("header x-tenant carries" in f for f in found), found
    assert any("body carries" in f for f in found), found


def test_basic_auth_built_from_netrc_is_caught(canary_env: dict[str, str]) -> None:
    llm = ScriptedLLM({"lead": [Turn.text("hi")]})
    login, password = NETRC_USERINFO.split(":")
    client = httpx.AsyncClient(transport=llm.transport(), auth=(login, password))
    refused = _one_request(client, llm)
    assert refused is not None and refused.startswith(FOREIGN)
    found = leaks(llm.requests)
    assert any("header authorization carries" in f for f in found), found


def test_a_client_that_trusts_the_environment_is_named(
    canary_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with recording(monkeypatch) as environ:
        httpx.Client(trust_env=True, verify=False).close()
        os.getenv("DEEPSEEK_API_KEY")
        os.getenvb(b"GROQ_API_KEY")
        _ = "ANTHROPIC_API_KEY" in os.environ
    found = environ.sensitive()
    # httpx asks urllib for proxies, which walks the whole environment.
    assert any(f.startswith("HTTPS_PROXY read by urllib.request:") for f in found), found
    assert any(f.startswith("DEEPSEEK_API_KEY read by tests.test_keyless:") for f in found)
    assert any(f.startswith("ANTHROPIC_API_KEY read by tests.test_keyless:") for f in found)
    assert any(f.startswith("GROQ_API_KEY read by tests.test_keyless:") for f in found)
