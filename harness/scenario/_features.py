"""Feature tags are decided by a scenario's content: each tag's rule, and the check that
the declared list agrees with them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from harness.scenario._model import DEFAULT_GUARD

Problem = tuple[str, str]  # (JSON pointer, message)


def unknown(kind: str, value: str, known: Any) -> str:
    return f"unknown {kind} {value!r}; expected one of: {', '.join(known) or 'none'}"


# -- features: every tag is decided by the content ------------------------------------
# A downstream runtime skips scenarios by their tags without reading the rest, so a tag
# that disagrees with the content would silently skip a case it could run, or run one it
# cannot. Each rule reads some top-level sections and says whether its tag applies and
# why, either way: the reason goes into the problem, so the author sees what decided it.
def step_calls(step: dict[str, Any], where: str) -> Iterator[tuple[dict[str, Any], str]]:
    if "call" in step:
        yield step, where
    for j, call in enumerate(step.get("calls", [])):
        yield call, f"{where}/calls/{j}"


Evidence = tuple[bool, str]


def _model_phase(doc: dict[str, Any]) -> str | None:
    for i, phase in enumerate(doc["phases"]):
        if "start" in phase:
            return f"/phases/{i} starts {phase['start']}"
        if "resume" in phase:
            return f"/phases/{i} resumes {phase['resume']}"
    return None


def _service(doc: dict[str, Any]) -> Evidence:
    model = _model_phase(doc)
    if model is None:
        return True, "every phase is a direct ask"
    return False, f"{model}, which needs the model"


def _assembled(doc: dict[str, Any]) -> Evidence:
    model = _model_phase(doc)
    if model is None:
        return False, "every phase is a direct ask, with no model"
    return True, model


def _resume(doc: dict[str, Any]) -> Evidence:
    for i, phase in enumerate(doc["phases"]):
        if "resume" in phase:
            return True, f"/phases/{i} resumes {phase['resume']}"
    return False, "no phase resumes a session"


def _plan_mode(doc: dict[str, Any]) -> Evidence:
    agents: dict[str, Any] = doc.get("agents", {})
    for name, spec in agents.items():
        if spec.get("plan_mode", False):
            return True, f"/agents/{name}/plan_mode is true"
        for i, step in enumerate(spec["script"]):
            for call, at in step_calls(step, f"/agents/{name}/script/{i}"):
                if call["call"] == "exit_plan_mode":
                    return True, f"{at} calls exit_plan_mode"
    if doc["expect"].get("plan_mode"):
        return True, "/expect/plan_mode is set"
    return False, (
        "no agent calls exit_plan_mode or starts in plan mode, and expect sets no plan_mode"
    )


def _intent(doc: dict[str, Any]) -> Evidence:
    for i, phase in enumerate(doc["phases"]):
        for j, question in enumerate(phase.get("ask", {}).get("questions", [])):
            if "intent" in question:
                return True, f"/phases/{i}/ask/questions/{j} declares an intent"
    return False, "no direct ask question declares an intent"


def _faults_tag(doc: dict[str, Any]) -> Evidence:
    faults = doc.get("faults", [])
    if faults:
        return True, f"/faults/0 injects {faults[0]['kind']}"
    return False, "the scenario injects no faults"


def _header_override(doc: dict[str, Any]) -> Evidence:
    for name, spec in doc.get("agents", {}).items():
        if spec.get("session"):
            return True, f"/agents/{name}/session overrides the durable header"
    return False, "no agent overrides its durable session header"


def _parallel_calls(doc: dict[str, Any]) -> Evidence:
    for name, spec in doc.get("agents", {}).items():
        for i, step in enumerate(spec["script"]):
            if len(step.get("calls", [])) >= 2:
                where = f"/agents/{name}/script/{i}"
                return True, f"{where} makes {len(step['calls'])} tool calls in one reply"
    return False, "no reply makes more than one tool call"


def _nested_delegation(doc: dict[str, Any]) -> Evidence:
    agents: dict[str, Any] = doc.get("agents", {})
    for name, spec in agents.items():
        owner = spec.get("spawned_by")
        # An unknown owner is reported by the lineage check; it proves no nesting here.
        grand = agents[owner].get("spawned_by") if owner in agents else None
        if grand is not None:
            return True, f"/agents/{name} is spawned_by {owner}, itself spawned_by {grand}"
    return False, "no child delegates again"


def _setting(section: dict[str, Any], key: str, default: str, where: str) -> tuple[str, str]:
    """A setting's value, and how to say it: by its pointer, or as the default it took."""
    if key in section:
        return section[key], f"{where} is {section[key]}"
    return default, f"{where} is not set, so {default}"


def _hang(doc: dict[str, Any]) -> Evidence:
    outcome, said = _setting(doc["expect"], "outcome", "", "/expect/outcome")
    return outcome == "hang", said


def _guard_variant(doc: dict[str, Any]) -> Evidence:
    guard, said = _setting(doc, "guard", DEFAULT_GUARD, "/guard")
    if guard == DEFAULT_GUARD:
        return False, f"{said}, the decision"
    return True, f"{said}, a test-only guard"


def _no_registry(doc: dict[str, Any]) -> Evidence:
    registry, said = _setting(doc.get("world", {}), "registry", "present", "/world/registry")
    return registry == "absent", said


def _no_answerer(doc: dict[str, Any]) -> Evidence:
    answerer, said = _setting(doc.get("world", {}), "answerer", "tripwire", "/world/answerer")
    return answerer == "none", said


def _no_user_questions(doc: dict[str, Any]) -> Evidence:
    service, said = _setting(
        doc.get("world", {}), "user_questions", "present", "/world/user_questions"
    )
    return service == "absent", said


def _ask_during_run(doc: dict[str, Any]) -> Evidence:
    for i, phase in enumerate(doc["phases"]):
        if "while" in phase.get("ask", {}):
            return True, f"/phases/{i}/ask asks while a model phase runs"
    return False, "no ask phase has while"


def _owned_resume(doc: dict[str, Any]) -> Evidence:
    for i, phase in enumerate(doc["phases"]):
        if "resume" in phase and "owner" in phase:
            return True, f"/phases/{i} resumes {phase['resume']} owned by {phase['owner']}"
    return False, "no phase resumes a session under an owner"


def _live_lineage(doc: dict[str, Any]) -> Evidence:
    for i, phase in enumerate(doc["phases"]):
        if "resume" in phase and phase.get("alongside"):
            return True, f"/phases/{i} resumes {phase['resume']} alongside live roots"
    return False, "no phase resumes a session alongside live roots"


def _concurrent_children(doc: dict[str, Any]) -> Evidence:
    for name, spec in doc.get("agents", {}).items():
        for i, step in enumerate(spec["script"]):
            if "after" in step:
                return True, f"/agents/{name}/script/{i} is held until {step['after']} ends"
    return False, "no step is held with after"


def _interrupt(doc: dict[str, Any]) -> Evidence:
    for qid, reply in doc.get("world", {}).get("answers", {}).items():
        if reply == "interrupt":
            return True, f"/world/answers/{qid} interrupts the asking run"
    return False, "no answer in world.answers is interrupt"


def _provider_lifecycle(doc: dict[str, Any]) -> Evidence:
    for i, phase in enumerate(doc["phases"]):
        if "provider" in phase.get("ask", {}):
            return True, f"/phases/{i}/ask registers or disposes a provider"
    return False, "no ask phase has provider"


# tag -> (the top-level sections its rule reads, the rule). Keys in FEATURES order; a test
# checks that every known tag has exactly one rule.
FEATURE_RULES: dict[str, tuple[tuple[str, ...], Callable[[dict[str, Any]], Evidence]]] = {
    "service": (("phases",), _service),
    "assembled": (("phases",), _assembled),
    "resume": (("phases",), _resume),
    "plan-mode": (("agents", "expect"), _plan_mode),
    "intent": (("phases",), _intent),
    "faults": (("faults",), _faults_tag),
    "header-override": (("agents",), _header_override),
    "parallel-calls": (("agents",), _parallel_calls),
    "nested-delegation": (("agents",), _nested_delegation),
    "hang": (("expect",), _hang),
    "guard-variant": (("guard",), _guard_variant),
    "no-registry": (("world",), _no_registry),
    "no-answerer": (("world",), _no_answerer),
    "ask-during-run": (("phases",), _ask_during_run),
    "no-user-questions": (("world",), _no_user_questions),
    "owned-resume": (("phases",), _owned_resume),
    "provider-lifecycle": (("phases",), _provider_lifecycle),
    "live-lineage": (("phases",), _live_lineage),
    "concurrent-children": (("agents",), _concurrent_children),
    "interrupt": (("world",), _interrupt),
}
# Exactly one of these applies to every scenario: naming the wrong one is one mistake,
# reported once, as a swap.
_KIND_SWAP = {"service": "assembled", "assembled": "service"}
_REQUIRED_SECTIONS = ("phases", "expect")  # the others have defaults when absent


def feature_problems(doc: dict[str, Any], sound: Callable[..., bool]) -> Iterator[Problem]:
    declared: list[str] = doc["features"]
    verdicts: dict[str, Evidence] = {}
    for tag, (sections, rule) in FEATURE_RULES.items():
        # A section the schema refused (or a required one that is missing) cannot decide
        # a tag: its own problem is already reported.
        if sound(*sections) and all(s in doc for s in sections if s in _REQUIRED_SECTIONS):
            verdicts[tag] = rule(doc)
    swapped: set[str] = set()
    for i, tag in enumerate(declared):
        if tag not in verdicts or verdicts[tag][0]:
            continue
        why = verdicts[tag][1]
        other = _KIND_SWAP.get(tag)
        if other is not None and other not in declared and verdicts.get(other, (False,))[0]:
            swapped.add(other)
            yield f"/features/{i}", f"{tag!r} does not apply: {why}; replace it with {other!r}"
        else:
            yield f"/features/{i}", f"{tag!r} does not apply: {why}; remove it"
    for tag, (applies, why) in verdicts.items():
        if applies and tag not in declared and tag not in swapped:
            yield "/features", f"missing {tag!r}: {why}; add it"
