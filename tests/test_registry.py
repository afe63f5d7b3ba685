from __future__ import annotations

import pytest

from harness.runtime.registry import AbortSignal, Agent, AgentRegistry, RegistryError


def test_roots_are_unowned_agents_in_registration_order() -> None:
    reg = AgentRegistry()
    a, b, child = Agent("a"), Agent("b"), Agent("child")
    reg.enter(b)
    reg.enter(a)
    reg.enter(child, owner=a)
    assert reg.roots() == [b, a]
    assert [reg.get(id) for id in ("b", "a", "child")] == [b, a, child]
    assert reg.owner_of(child) is a
    assert reg.owner_of(a) is None
    assert reg.owner_of(Agent("child")) is None  # a stale same-id object is owned by no one


def test_get_returns_the_registered_object_not_an_equal_one() -> None:
    reg = AgentRegistry()
    live = Agent("x")
    reg.enter(live)
    stale = Agent("x")
    assert reg.get("x") is live
    assert reg.get("x") is not stale
    assert reg.get("nobody") is None


def test_duplicate_id_is_refused() -> None:
    reg = AgentRegistry()
    reg.enter(Agent("x"))
    with pytest.raises(RegistryError, match="already registered"):
        reg.enter(Agent("x"))


def test_detach_removes_exactly_its_own_entry_and_is_idempotent() -> None:
    reg = AgentRegistry()
    old = Agent("x")
    detach_old = reg.enter(old)
    detach_old()
    assert reg.get("x") is None
    new = Agent("x")
    reg.enter(new)
    detach_old()  # a late second call must not remove the re-registered object
    assert reg.get("x") is new


def test_child_of_a_detached_owner_is_still_not_a_root() -> None:
    reg = AgentRegistry()
    parent, child = Agent("parent"), Agent("child")
    detach_parent = reg.enter(parent)
    reg.enter(child, owner=parent)
    detach_parent()
    assert reg.roots() == []
    assert reg.owner_of(child) is parent


def test_an_abort_signal_calls_each_listener_once_and_one_removed_never() -> None:
    signal = AbortSignal()
    heard: list[str] = []
    signal.on_abort(lambda: heard.append("kept"))
    remove = signal.on_abort(lambda: heard.append("removed"))
    remove()
    remove()  # removing twice is harmless
    signal.abort()
    signal.abort()  # fires once
    assert (signal.aborted, heard) == (True, ["kept"])
    # A listener added after it fired is called at once; removing it then does nothing.
    signal.on_abort(lambda: heard.append("late"))()
    assert heard == ["kept", "late"]
