"""The order tool errors and handoffs are reported in: the delegation tree's, which the
logs of concurrent children need not follow (harness/adapters/reference/observe.py)."""

from __future__ import annotations

from typing import Any

from harness.adapters.reference.observe import DelegationTree


def header(seq: int, parent: str | None = None) -> dict[str, Any]:
    return {"seq": seq, "type": "session/header", "parent_session": parent}


def event(seq: int, kind: str = "tool/result") -> dict[str, Any]:
    return {"seq": seq, "type": kind}


def test_concurrent_children_sort_in_the_order_they_were_started() -> None:
    tree = DelegationTree()
    # The parent starts a (header 4) then b (header 5); b's error is logged first (6).
    tree.add("parent", [header(1), event(2, "message/user"), event(3, "message/assistant"),
                        event(10), event(11)])  # fmt: skip
    tree.add("a", [header(4, "parent"), event(7), event(9, "message/assistant")])
    tree.add("b", [header(5, "parent"), event(6), event(8, "message/assistant")])
    logged = [("parent", 3), ("b", 6), ("a", 7), ("parent", 10), ("parent", 11)]
    assert sorted(logged, key=lambda e: tree.key(*e)) == [
        ("parent", 3), ("a", 7), ("b", 6), ("parent", 10), ("parent", 11)
    ]  # fmt: skip


def test_a_grandchild_sits_inside_its_parents_run_and_a_resume_in_log_order() -> None:
    tree = DelegationTree()
    tree.add("root", [header(1), event(2), event(20)])
    tree.add("kid", [header(3, "root"), event(5), event(9), {"seq": 30, "type": "session/resumed"},
                     event(31)])  # fmt: skip
    tree.add("grandkid", [header(4, "kid"), event(6)])
    tree.add("sibling", [header(8, "root"), event(7)])  # logged before kid's later events
    logged = [("root", 2), ("kid", 5), ("grandkid", 6), ("sibling", 7), ("kid", 9),
              ("root", 20), ("kid", 31)]  # fmt: skip
    assert sorted(logged, key=lambda e: tree.key(*e)) == [
        ("root", 2), ("grandkid", 6), ("kid", 5), ("kid", 9), ("sibling", 7), ("root", 20),
        ("kid", 31),
    ]  # fmt: skip


def test_a_parent_that_is_no_session_here_leaves_the_log_order() -> None:
    tree = DelegationTree()
    tree.add("child", [header(2, "elsewhere"), event(3)])
    tree.add("other", [header(1), event(4)])
    assert sorted([("other", 4), ("child", 3)], key=lambda e: tree.key(*e)) == [
        ("child", 3), ("other", 4)
    ]  # fmt: skip
