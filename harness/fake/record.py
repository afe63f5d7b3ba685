"""What the fake was sent: each request captured as it arrived, and the model-visible
prefix of all of them, gathered request by request (what a KV cache keys on).

A `Record` keeps the last `keep` requests whole and feeds every request into its
`PrefixLog`, so a snapshot's `model_prefix` covers every request while the fake keeps only
the last few bodies: a thousand-agent run would otherwise hold every body it was ever sent.
"""

from __future__ import annotations

import collections
import json
import marshal
from collections.abc import MutableSequence
from typing import TYPE_CHECKING, Any

from harness.contract import CapturedRequest

if TYPE_CHECKING:
    import httpx

# Marshalled tool list -> its canonical encoding, shared by every log in the process: a
# runtime sends the same few lists on nearly every request of every run. marshal's
# encoding is type-exact (true is not 1) and in key order, and costs a third as much, so
# an equal one means an equal canonical key; the canonical encoding still decides.
_CANONICAL: dict[bytes, str] = {}
_CANONICAL_MAX = 64


def _canonical(tools: Any) -> str:
    exact = marshal.dumps(tools, 2)
    key = _CANONICAL.get(exact)
    if key is None:
        if len(_CANONICAL) >= _CANONICAL_MAX:
            _CANONICAL.clear()
        key = _CANONICAL[exact] = json.dumps(tools, sort_keys=True)
    return key


class PrefixLog:
    """Each agent's system prompts (every distinct one, in the order first sent) and tool
    lists, checked on every request, not only each agent's first."""

    def __init__(self) -> None:
        # Each distinct value is held once, however many agents were sent it: a thousand
        # agents share one prompt per role and one tool list.
        self._prompts: dict[str, list[Any]] = {}
        self._tools: dict[str, str] = {}  # agent -> its first tool list, canonically encoded
        self._distinct: dict[str, tuple[str, Any]] = {}  # encoded -> (encoded, decoded)
        self._texts: dict[str, str] = {}

    def add(self, agent: str | None, body: Any) -> None:
        """One request as sent: `body` parsed (anything that is not a JSON object, or has
        no agent, is no chat request and is left out)."""
        if agent is None or not isinstance(body, dict):
            return
        tools = body.get("tools")
        key = _canonical(tools)
        key = self._distinct.setdefault(key, (key, tools))[0]
        self._tools.setdefault(agent, key)
        first = (body.get("messages") or [{}])[0]
        prompt = (
            first.get("content")
            if isinstance(first, dict) and first.get("role") == "system"
            else None
        )
        if isinstance(prompt, str):
            prompt = self._texts.setdefault(prompt, prompt)
        seen = self._prompts.setdefault(agent, [])
        if prompt not in seen:
            seen.append(prompt)

    def summary(self) -> dict[str, Any]:
        """Tools are listed once when every request carried the same list (the runtime's
        promise), and per agent otherwise, so a divergence shows up in the snapshot diff.
        An agent sent one system prompt throughout (a resumed session included) has it as
        its entry; one whose prompt changed (plan mode's section, gone after an approval)
        has the list of every prompt it was sent, in the order first sent."""
        if not self._prompts:
            return {}
        system = {
            agent: seen[0] if len(seen) == 1 else list(seen)
            for agent, seen in self._prompts.items()
        }
        if len(self._distinct) == 1:
            return {"system": system, "tools": next(iter(self._distinct.values()))[1]}
        tools = {agent: self._distinct[key][1] for agent, key in self._tools.items()}
        return {"system": system, "tools": tools}


class Record:
    """The requests the fake was sent: the last `keep` captured (None keeps every one),
    every one's prefix summed up in `prefixes`, and how many arrived in `served`."""

    def __init__(self, keep: int | None = None) -> None:
        self.requests: MutableSequence[CapturedRequest] = (
            [] if keep is None else collections.deque(maxlen=keep)
        )
        self.served = 0  # requests answered, kept or not
        self.prefixes = PrefixLog()  # of every request answered, kept or not

    def add(
        self,
        request: httpx.Request,
        agent: str | None,
        step: int | None,
        body: Any,
        kept: bool = True,
    ) -> None:
        """One answered request: `body` as parsed, `kept=False` to keep no bytes of it."""
        self.prefixes.add(agent, body)
        raw = request.content if kept else b""
        self.requests.append(
            CapturedRequest(agent, step, raw, tuple(request.headers.multi_items()))
        )
