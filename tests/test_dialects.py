"""The shipped dialects against the real requests of each CLI (tests/fixtures/cli-requests,
recorded keyless against a loopback fake; NOTES.md there says how): every tool a dialect
spells is one the CLI declares, every scripted call of the corpus spelled in it fits that
tool's own JSON schema or its scenario is one the dialect says it `cannot` express, and the
fake sends it so."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness.fake import BASE_URL, ScriptedLLM, Turn
from harness.fake.dialect import (
    ASK_TOOL,
    DELEGATION_TOOL,
    DIALECTS,
    PLAN_TOOL,
    Dialect,
    DialectError,
    as_identifier,
)
from harness.scenario import Call
from tests.conftest import SCENARIOS

RECORDED = Path(__file__).parent / "fixtures" / "cli-requests"
SHIPPED = sorted(p.stem for p in DIALECTS.glob("*.json"))


def recording(runtime: str) -> dict[str, Any]:
    recorded: dict[str, Any] = json.loads((RECORDED / f"{runtime}.json").read_text("utf-8"))
    return recorded


@functools.cache
def declared(runtime: str) -> dict[str, dict[str, Any]]:
    """Every tool any recorded request of the CLI declares: name -> its argument schema."""
    out: dict[str, dict[str, Any]] = {}
    for request in recording(runtime)["requests"]:
        # Codex keeps its delegation tools in a namespace tool of their own.
        for tool in [t for top in request["tools"] for t in [top, *top.get("tools", [])]]:
            schema = tool.get("input_schema", tool.get("parameters"))
            if schema is not None:
                out.setdefault(tool["name"], schema)
    return out


def scripted_calls() -> Iterator[tuple[str, str, int, Call]]:
    """Every scripted call of the corpus to one of the scenario tools a dialect spells."""
    for sid, scenario in sorted(SCENARIOS.items()):
        for agent, spec in scenario.agents.items():
            for step, turn in enumerate(spec.script, 1):
                for call in turn.calls:
                    if call.tool in (DELEGATION_TOOL, ASK_TOOL, PLAN_TOOL):
                        yield sid, agent, step, call


def test_every_shipped_dialect_has_a_recording_and_loads_by_name() -> None:
    assert SHIPPED == ["claude-code", "codex", "gemini-cli", "opencode", "qwen-code"]
    for name in SHIPPED:
        dialect = Dialect.load(name)
        assert dialect.name == name
        # It says which version of the CLI it was written against: the recorded one.
        about = json.loads((DIALECTS / f"{name}.json").read_text("utf-8"))["about"]
        assert f"{recording(name)['cli']} {recording(name)['version']}" in about
        assert {DELEGATION_TOOL, ASK_TOOL} <= set(dialect.tools)


@pytest.mark.parametrize("runtime", SHIPPED)
def test_each_spelled_tool_is_one_the_cli_declares(runtime: str) -> None:
    dialect = Dialect.load(runtime)
    for scenario_tool, spelling in dialect.tools.items():
        assert spelling.tool in declared(runtime), (scenario_tool, sorted(declared(runtime)))
        # Read back: what the runtime reports under its name is the scenario's tool.
        assert dialect.scenario_tool(spelling.tool) == scenario_tool
    assert dialect.scenario_tool("Bash") == "Bash"


@pytest.mark.parametrize("runtime", SHIPPED)
def test_every_scripted_call_fits_the_clis_own_schema(runtime: str) -> None:
    import jsonschema

    dialect = Dialect.load(runtime)
    misfits = {}
    checked = 0
    for sid, agent, step, call in scripted_calls():
        spelling = dialect.spelling(call.tool)
        if spelling is None:  # a tool the runtime has no counterpart of (Codex: plans)
            misfits[sid, agent, step] = f"no {call.tool}"
            continue
        spelled = spelling.spell(call.args)
        schema = declared(runtime)[spelling.tool]
        validator = jsonschema.validators.validator_for(schema)(schema)
        errors = (
            ["unfilled"] if spelled is None else [e.message for e in validator.iter_errors(spelled)]
        )
        if errors:
            misfits[sid, agent, step] = errors[0]
        checked += 1
    assert checked > 30  # the whole corpus's delegations, asks and plans
    # The dialect names exactly the scenarios it cannot express, each with why.
    assert {sid for sid, _, _ in misfits} == set(dialect.cannot), misfits
    assert set(dialect.cannot) <= set(SCENARIOS)


@pytest.mark.parametrize("runtime", SHIPPED)
def test_the_fake_sends_a_scripted_ask_in_the_dialect(runtime: str) -> None:
    dialect = Dialect.load(runtime)
    ask = SCENARIOS["delegated-question-handoff"].agents["child"].script[0].calls[0]
    llm = ScriptedLLM({"child": [Turn(calls=(ask,))]}, dialect=dialect)
    body = {"model": "m", "messages": [{"role": "user", "content": "go"}]}
    with httpx.Client(transport=httpx.MockTransport(llm.router().handler)) as client:
        reply = client.post(f"{BASE_URL}/chat/completions", json=body).json()
    (sent,) = reply["choices"][0]["message"]["tool_calls"]
    spelling = dialect.spelling(ASK_TOOL)
    assert spelling is not None
    assert sent["function"]["name"] == spelling.tool
    question = json.loads(sent["function"]["arguments"])["questions"][0]
    assert question["question"] == "Should deployment use the CUDA fallback?"
    assert question["header"] == "Deployment"
    assert [o["label"] for o in question["options"]] == ["Yes", "No"]
    assert ("id" in question) == (runtime == "codex")  # the one CLI that takes an id


def test_templates_fill_values_lists_fallbacks_and_defaults() -> None:
    spelling = Dialect.from_json(
        {
            "tools": {
                ASK_TOOL: {
                    "tool": "Ask",
                    "defaults": {"mode": "plain"},
                    "arguments": {
                        "qs": {
                            "$each": "questions",
                            "$defaults": {"multi_select": False},
                            "$as": {
                                "q": "{question}",
                                "h": "{header|id}",
                                "many": "{multi_select}",
                                "note": "asked: {question}",
                                "left": "{absent}",
                            },
                        },
                        "mode": "{mode}",
                        "fixed": [1, True, None],
                    },
                }
            }
        },
        "here",
    ).spelling(ASK_TOOL)
    assert spelling is not None
    args = {"questions": [{"id": "a", "question": "Q?"}, {"id": "b", "question": "R?",
                          "header": "H", "multi_select": True}]}  # fmt: skip
    assert spelling.spell(args) == {
        "qs": [
            {"q": "Q?", "h": "a", "many": False, "note": "asked: Q?"},
            {"q": "R?", "h": "H", "many": True, "note": "asked: R?"},
        ],
        "mode": "plain",
        "fixed": [1, True, None],
    }
    # A string the template needs and the arguments lack: nothing is sent.
    assert spelling.spell({"questions": [{"id": "a"}]}) is None
    assert spelling.spell({"questions": "not a list"}) is None


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([], "here: write {name: RUNTIME, tools:"),
        ({"tools": {"bash": {}}}, "here.tools: a mapping from subagent, ask_user_question"),
        ({"tools": {ASK_TOOL: {"tool": 3}}}, "here.tools.ask_user_question.tool:"),
        ({"tools": {ASK_TOOL: {"arguments": {"q": {"$each": 1}}}}}, ".arguments.q: write {$each"),
        ({"tools": {ASK_TOOL: {"tool": "t"}, PLAN_TOOL: {"tool": "t"}}}, "as one runtime tool"),
        ({"tools": {DELEGATION_TOOL: {"arguments": {}}}}, "no string carries {prompt}"),
    ],
)
def test_a_bad_dialect_is_refused_by_name(value: Any, message: str) -> None:
    with pytest.raises(DialectError) as info:
        Dialect.from_json(value, "here")
    assert message in str(info.value)


def test_an_unknown_dialect_names_the_shipped_ones(tmp_path: Path) -> None:
    with pytest.raises(DialectError, match="no such dialect file; or name a shipped one: claude"):
        Dialect.load("nonesuch")
    broken = tmp_path / "d.json"
    broken.write_text("{", "utf-8")
    with pytest.raises(DialectError, match=r"d\.json: not a JSON file"):
        Dialect.load(str(broken))


def test_a_side_request_is_answered_and_moves_no_script() -> None:
    # Claude Code's title request (no tools, "Write the title ..."), when nonessential
    # traffic is on: answered, shown, and never the root's first turn.
    dialect = Dialect.load("claude-code")
    scenario = SCENARIOS["live-root-answered"]
    llm = ScriptedLLM({n: a.script for n, a in scenario.agents.items()}, dialect=dialect,
                      roots=scenario.roots())  # fmt: skip
    title = {
        "model": "m",
        "max_tokens": 8,
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": "<session>\nDecide.\n</session>\n\nWrite the title in ...",
                    }
                ],
            }
        ],
    }
    root = {
        "model": "m",
        "max_tokens": 8,
        "tools": [{"name": "AskUserQuestion", "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": "Decide the CUDA fallback with the user."}],
    }
    with httpx.Client(transport=httpx.MockTransport(llm.router().handler)) as client:
        said = client.post(f"{BASE_URL}/messages", json=title).json()
        assert [b["text"] for b in said["content"]] == ["Scripted session"]
        assert llm.progress() == {"lead": 0}
        asked = client.post(f"{BASE_URL}/messages", json=root).json()
    assert [b["name"] for b in asked["content"] if b["type"] == "tool_use"] == ["AskUserQuestion"]
    assert llm.progress() == {"lead": 1}
    assert len(llm.side) == 1 and llm.side[0].startswith("session title")
    assert llm.errors == []


@pytest.mark.parametrize(
    ("side", "problem"),
    [
        ([{"about": "title", "reply": "t"}], "say how it is known"),
        ([{"about": "title", "no_tools": True}], "write {about, reply, no_tools?, contains?}"),
        ([{"about": "", "reply": "t", "no_tools": True}], "about and reply are non-empty"),
        ([{"about": "t", "reply": "t", "no_tools": "yes"}], "no_tools is true or false"),
        ({"about": "t"}, "a list of side requests"),
    ],
)
def test_a_side_request_must_say_how_it_is_known(side: Any, problem: str) -> None:
    with pytest.raises(DialectError) as info:
        Dialect.from_json({"tools": {}, "side": side}, "d")
    assert problem in str(info.value)
    assert str(info.value).startswith("d.side")


def test_a_list_the_arguments_lack_is_left_out() -> None:
    # parallel-children-refused's free-text questions, in Claude Code's spelling: no
    # options at all (which its schema refuses: the dialect says it cannot express them).
    spelling = Dialect.load("claude-code").spelling(ASK_TOOL)
    assert spelling is not None
    ask = SCENARIOS["parallel-children-refused"].agents["child-a"].script[0].calls[0]
    assert spelling.spell(ask.args) == {"questions": [{
        "question": "Should gpu-pool use the CUDA fallback?", "header": "gpu-fallback",
        "multiSelect": False}]}  # fmt: skip
    # A field that is there but no list of objects still cannot be spelled.
    assert spelling.spell({"questions": [{"question": "q", "options": "Yes"}]}) is None


def test_qwen_codes_memory_extraction_is_a_side_request() -> None:
    # It carries the root's history, and so its prompt: routed by content, it would have
    # taken the root's next turn.
    dialect = Dialect.load("qwen-code")
    scenario = SCENARIOS["live-root-answered"]
    llm = ScriptedLLM({n: a.script for n, a in scenario.agents.items()}, dialect=dialect,
                      roots=scenario.roots())  # fmt: skip
    system = "You are now acting as the managed memory extraction subagent for this session."
    tool = {"type": "function", "function": {"name": "read_file", "parameters": {}}}
    history = [
        {"role": "system", "content": system},
        {"role": "user", "content": "Decide the CUDA fallback with the user."},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "Scan the recent conversation history."},
    ]
    body = {"model": "m", "tools": [tool], "messages": history}
    with httpx.Client(transport=httpx.MockTransport(llm.router().handler)) as client:
        said = client.post(f"{BASE_URL}/chat/completions", json=body).json()
    assert said["choices"][0]["message"]["content"] == "Nothing to remember."
    assert llm.progress() == {"lead": 0} and llm.errors == []
    assert llm.side[0].startswith("managed memory extraction")


def _responses(client: httpx.Client, items: list[dict[str, Any]]) -> dict[str, Any]:
    schema = {"type": "object"}
    tools = [{"type": "namespace", "name": "multi_agent_v1", "description": "agents",
              "tools": [{"type": "function", "name": n, "parameters": schema}
                        for n in ("spawn_agent", "wait_agent")]},
             {"type": "function", "name": "request_user_input", "parameters": schema}]  # fmt: skip
    body = {"model": "m", "input": items, "tools": tools, "store": False}
    answer: dict[str, Any] = client.post(f"{BASE_URL}/responses", json=body).json()
    return answer


def test_a_delegation_in_two_calls_is_driven_to_its_handoff() -> None:
    # Codex: the scenario's one subagent call is spawn_agent, then (when its result, an
    # agent id, comes back) wait_agent on that id, which is no scripted step; the wait's
    # result is the handoff a template reads.
    scripts = {
        "parent": [
            Turn(calls=(Call("subagent", {"name": "child", "prompt": "Check it."}, "go"),)),
            Turn.text("GOT {{go.result}}"),
        ],
        "child": [Turn.text("UNRESOLVED: q?")],
    }
    llm = ScriptedLLM(scripts, dialect=Dialect.load("codex"), roots=["parent"], strict=True)
    root: list[dict[str, Any]] = [{"role": "user", "content": "Prepare."}]
    with httpx.Client(transport=httpx.MockTransport(llm.router().handler)) as client:
        (spawn,) = _responses(client, root)["output"]
        assert (spawn["name"], spawn["namespace"]) == ("spawn_agent", "multi_agent_v1")
        assert json.loads(spawn["arguments"]) == {"message": "Check it."}
        root += [{k: spawn[k] for k in ("type", "call_id", "name", "namespace", "arguments")},
                 {"type": "function_call_output", "call_id": spawn["call_id"],
                  "output": '{"agent_id":"thread-7","nickname":"Locke"}'}]  # fmt: skip
        (wait,) = _responses(client, root)["output"]
        assert (wait["name"], wait["namespace"]) == ("wait_agent", "multi_agent_v1")
        assert json.loads(wait["arguments"]) == {"targets": ["thread-7"], "timeout_ms": 3600000}
        assert llm.progress() == {"parent": 1, "child": 0}  # no scripted step was consumed
        child = [{"role": "user", "content": "<environment_context/>"},
                 {"role": "user", "content": "Check it."}]  # fmt: skip
        (said,) = _responses(client, child)["output"]
        assert said["content"][0]["text"] == "UNRESOLVED: q?"
        handoff = '{"status":{"thread-7":{"completed":"UNRESOLVED: q?"}},"timed_out":false}'
        waited = {"type": "function_call_output", "call_id": wait["call_id"], "output": handoff}
        root += [{k: wait[k] for k in ("type", "call_id", "name", "arguments")}, waited]
        (done,) = _responses(client, root)["output"]
    assert done["content"][0]["text"] == f"GOT {handoff}"
    assert llm.progress() == {"parent": 2, "child": 1}
    assert llm.errors == [] and llm.unconsumed() == []


@pytest.mark.parametrize("namespaced", [True, False])
def test_a_namespaced_call_is_spelled_as_the_request_declares_its_tool(namespaced: bool) -> None:
    # Codex 0.133 on keeps spawn_agent in its multi_agent_v1 namespace; 0.132 declares it
    # at the top level, and a namespaced call to it is `unsupported call:
    # multi_agent_v1spawn_agent`. The call goes as the request declares the tool.
    scripts = {"parent": [Turn(calls=(Call("subagent", {"name": "c", "prompt": "P."}),))],
               "c": []}  # fmt: skip
    llm = ScriptedLLM(scripts, dialect=Dialect.load("codex"), roots=["parent"])
    schema = {"type": "object"}
    spawn_tool = {"type": "function", "name": "spawn_agent", "parameters": schema}
    tools: list[dict[str, Any]] = (
        [{"type": "namespace", "name": "multi_agent_v1", "description": "a", "tools": [spawn_tool]}]
        if namespaced
        else [spawn_tool]
    )
    body = {"model": "m", "input": [{"role": "user", "content": "Go."}], "tools": tools}
    with httpx.Client(transport=httpx.MockTransport(llm.router().handler)) as client:
        (spawn,) = client.post(f"{BASE_URL}/responses", json=body).json()["output"]
    assert spawn["name"] == "spawn_agent"
    assert spawn.get("namespace") == ("multi_agent_v1" if namespaced else None)


def test_a_spawn_that_returned_no_agent_id_is_refused_by_name() -> None:
    # Codex answers `unsupported call: spawn_agent` when the call lacks its namespace: the
    # fake says so rather than sending a wait on nothing, and moves no script.
    scripts = {"parent": [Turn(calls=(Call("subagent", {"name": "c", "prompt": "P."}),)),
                          Turn.text("done")], "c": [Turn.text("x")]}  # fmt: skip
    llm = ScriptedLLM(scripts, dialect=Dialect.load("codex"), roots=["parent"])
    root: list[dict[str, Any]] = [{"role": "user", "content": "Go."}]
    with httpx.Client(transport=httpx.MockTransport(llm.router().handler)) as client:
        (spawn,) = _responses(client, root)["output"]
        root += [{k: spawn[k] for k in ("type", "call_id", "name", "arguments")},
                 {"type": "function_call_output", "call_id": spawn["call_id"],
                  "output": "unsupported call: spawn_agent"}]  # fmt: skip
        refused = client.post(f"{BASE_URL}/responses", json={"model": "m", "input": root})
    assert refused.status_code == 400
    why = "the spawn_agent result 'unsupported call: spawn_agent' lacks what wait_agent's"
    assert why in refused.json()["error"]["message"]
    assert llm.progress() == {"parent": 1, "c": 0}


def test_the_second_call_is_a_tool_the_cli_declares() -> None:
    dialect = Dialect.load("codex")
    then = dialect.delegation.then
    assert then is not None and then.tool in declared("codex")
    assert then.namespace == dialect.delegation.namespace == "multi_agent_v1"
    assert Dialect.from_json(dialect.to_json(), "hello") == dialect  # as a hello declares it


@pytest.mark.parametrize(
    ("then", "message"),
    [
        (3, "here.tools.subagent.then: write {tool: NAME"),
        ({"arguments": {}}, "here.tools.subagent.then: write {tool: NAME"),
        ({"tool": "spawn"}, "here.tools.subagent.then.tool: the second call is another tool"),
        ({"tool": "ask"}, "here.tools: two scenario tools spelled as one runtime tool"),
        ({"tool": "wait", "namespace": 1}, "here.tools.subagent.then.namespace: the namespace"),
    ],
)
def test_a_bad_second_call_is_refused_by_name(then: Any, message: str) -> None:
    tools = {DELEGATION_TOOL: {"tool": "spawn", "arguments": {"m": "{prompt}"}, "then": then},
             ASK_TOOL: {"tool": "ask"}}  # fmt: skip
    with pytest.raises(DialectError) as info:
        Dialect.from_json({"tools": tools}, "here")
    assert message in str(info.value)


def test_a_subagent_that_ends_by_a_tool_is_sent_its_last_words_in_it() -> None:
    # Gemini CLI's subagents end only by calling complete_task: a last step that only
    # speaks goes as that call, beside the text; a request that does not declare the tool
    # (a root's) gets the text alone, and so does a step before the last.
    dialect = Dialect.load("gemini-cli")
    finish = {"type": "function", "function": {"name": "complete_task"}}
    llm = ScriptedLLM({"child": [Turn(say="Looking."), Turn(say="UNRESOLVED: CUDA?")]},
                      dialect=dialect)  # fmt: skip
    body: dict[str, Any] = {
        "model": "m",
        "messages": [{"role": "user", "content": "go"}],
        "tools": [finish],
    }
    with httpx.Client(transport=httpx.MockTransport(llm.router().handler)) as client:
        first = client.post(f"{BASE_URL}/chat/completions", json=body).json()
        body["messages"] += [first["choices"][0]["message"], {"role": "user", "content": "on"}]
        last = client.post(f"{BASE_URL}/chat/completions", json=body).json()
    assert "tool_calls" not in first["choices"][0]["message"]
    said = last["choices"][0]["message"]
    assert said["content"] == "UNRESOLVED: CUDA?"
    (call,) = said["tool_calls"]
    assert call["function"]["name"] == "complete_task"
    assert json.loads(call["function"]["arguments"]) == {"result": {"response": said["content"]}}
    root = ScriptedLLM({"lead": [Turn(say="LEAD_COMPLETED")]}, dialect=dialect)
    body = {"model": "m", "messages": [{"role": "user", "content": "go"}], "tools": []}
    with httpx.Client(transport=httpx.MockTransport(root.router().handler)) as client:
        said = client.post(f"{BASE_URL}/chat/completions", json=body).json()["choices"][0]
    assert said["message"]["content"] == "LEAD_COMPLETED"
    assert "tool_calls" not in said["message"]


@pytest.mark.parametrize(
    ("finish", "problem"),
    [
        ({"tool": "complete_task", "arguments": {"result": "done"}}, "no string carries {text}"),
        ({"tool": "Task", "arguments": {"t": "{text}"}}, "a tool of its own"),
        ("complete_task", "write {tool: NAME"),
    ],
)
def test_a_finish_call_must_carry_the_text_in_a_tool_of_its_own(finish: Any, problem: str) -> None:
    tools = {DELEGATION_TOOL: {"tool": "Task"}}
    with pytest.raises(DialectError) as info:
        Dialect.from_json({"tools": tools, "finish": finish}, "d")
    assert problem in str(info.value)
    assert str(info.value).startswith("d.finish")


def test_a_tool_per_child_is_named_after_the_child() -> None:
    # The OpenAI Agents SDK offers each child as a tool of its own (Agent.as_tool).
    dialect = Dialect.from_json(
        {"tools": {DELEGATION_TOOL: {"tool": "{name}", "arguments": {"input": "{prompt}"}}}}, "d"
    )
    delegate = SCENARIOS["parallel-children-refused"].agents["parent"].script[0]
    llm = ScriptedLLM({"parent": [delegate]}, dialect=dialect)
    body = {"model": "m", "messages": [{"role": "user", "content": "go"}]}
    with httpx.Client(transport=httpx.MockTransport(llm.router().handler)) as client:
        reply = client.post(f"{BASE_URL}/chat/completions", json=body).json()
    sent = reply["choices"][0]["message"]["tool_calls"]
    assert [c["function"]["name"] for c in sent] == ["child-a", "child-b"]
    assert json.loads(sent[0]["function"]["arguments"]) == {
        "input": delegate.calls[0].args["prompt"]
    }
    with pytest.raises(DialectError, match=r"d\.tools\.subagent\.tool: a name, or one with"):
        tools = {DELEGATION_TOOL: {"tool": "{agent}", "arguments": {"p": "{prompt}"}}}
        Dialect.from_json({"tools": tools}, "d")
    with pytest.raises(DialectError, match=r"d\.tools\.ask_user_question\.tool: a name, no templ"):
        Dialect.from_json({"tools": {ASK_TOOL: {"tool": "{name}"}}}, "d")


def test_a_tool_per_child_may_be_named_as_an_identifier_and_read_a_dotted_path() -> None:
    assert [as_identifier(n) for n in ("child-a", "level 2", "4th", "ok_1")] == [
        "child_a", "level_2", "_4th", "ok_1"
    ]  # fmt: skip
    dialect = Dialect.from_json({"tools": {
        DELEGATION_TOOL: {"tool": "{identifier}", "arguments": {"task": "{prompt}"}},
        ASK_TOOL: {"tool": "user_input", "arguments": {"question": "{questions.0.question}"}},
    }}, "test")  # fmt: skip
    llm = ScriptedLLM({
        "parent": [Turn.tool(DELEGATION_TOOL, {"name": "child-a", "prompt": "Check it."}),
                   Turn.text("done")],
        "child-a": [Turn.tool(ASK_TOOL, {"questions": [{"id": "q", "question": "Which?"}]})],
    }, dialect=dialect)  # fmt: skip
    with httpx.Client(transport=httpx.MockTransport(llm.router().handler)) as client:
        post = functools.partial(client.post, f"{BASE_URL}/chat/completions")
        said = [[{"role": "user", "content": text}] for text in ("Go.", "Check it.")]
        sent = [post(json={"model": "m", "messages": m}).json() for m in said]
    calls = [r["choices"][0]["message"]["tool_calls"][0]["function"] for r in sent]
    assert [(c["name"], json.loads(c["arguments"])) for c in calls] == [
        ("child_a", {"task": "Check it."}), ("user_input", {"question": "Which?"})
    ]  # fmt: skip
    with pytest.raises(DialectError, match=r"\{name\} or \{identifier\}"):
        Dialect.from_json({"tools": {DELEGATION_TOOL: {"tool": "{child}"}}}, "test")


def test_calls_a_runtime_keeps_in_text_are_read_back_as_the_calls_sent() -> None:
    # smolagents' way: the call as an assistant text, its result as the next user text.
    transcript = {"calls": "Calling tools:\n", "results": "Observation:\n"}
    dialect = Dialect.from_json({"tools": {}, "transcript": transcript}, "test")
    llm = ScriptedLLM({"lead": [
        Turn.tool(ASK_TOOL, {"questions": [{"id": "q", "question": "Which?"}]}, label="ask"),
        Turn.text("ANSWERED: {{ask.result}}"),
    ]}, dialect=dialect)  # fmt: skip
    first = [{"role": "user", "content": "Decide."}]
    with httpx.Client(transport=httpx.MockTransport(llm.router().handler)) as client:
        post = functools.partial(client.post, f"{BASE_URL}/chat/completions")
        sent = post(json={"model": "m", "messages": first}).json()["choices"][0]["message"]
        call_id = sent["tool_calls"][0]["id"]
        said = [
            *first,
            {"role": "assistant", "content": f"Calling tools:\n[{{'id': '{call_id}', ...}}]"},
            {"role": "user", "content": "Observation:\nNo"},
        ]
        reply = post(json={"model": "m", "messages": said}).json()["choices"][0]["message"]
    assert reply["content"] == "ANSWERED: No" and llm.results == {call_id: "No"}
    assert llm.errors == []
    with pytest.raises(DialectError, match=r"test.transcript: write \{calls: PREFIX"):
        Dialect.from_json({"tools": {}, "transcript": {"calls": "x"}}, "test")
