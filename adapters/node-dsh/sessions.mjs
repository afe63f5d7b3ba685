// Upstream's durable session logs -> the protocol's observation of an assembled scenario:
// tool errors, handoffs, finals and plan mode, each agent named by its session id. Also the
// fields a run without them reports: every observation field is required
// (scenarios/protocol.json), so a field left out is an error, never "nothing happened".
//
// Order matters: `tool_errors` and `handoffs` are compared in order, and upstream runs
// parallel children concurrently, so the wall clock would interleave them by chance. They are
// read in the order of the delegation tree instead, phase by phase: an agent's events in log
// order, with each child's subtree at the parent's call that started it, children in call
// order: the order the reference reports too (scenarios/INTERPRETING.md), and the one a runtime
// that runs its calls one by one logs.

import { published } from "./under-test.mjs";

const textOf = (content) =>
  (content ?? [])
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("");

/** The session's last non-empty assistant text, up to `until` (ms). */
function lastSaid(session, until = Infinity) {
  let said = null;
  for (const event of session?.events ?? []) {
    if (event.time > until) break;
    if (event.type === "assistant/message") {
      const text = textOf(event.data.message.content);
      if (text !== "") said = text;
    }
  }
  return said;
}

/** The child session a delegation call started: its task (first user message) is the call's
 * prompt. Falls back to the earliest unclaimed child, for a runtime that rewrote the prompt. */
function childOf(sessions, parentId, argumentsText, claimed) {
  let prompt;
  try {
    prompt = JSON.parse(argumentsText).prompt;
  } catch {
    prompt = undefined;
  }
  const children = [...sessions]
    .filter(([id, s]) => s.header.parentSession === parentId && !claimed.has(id))
    .sort(([, a], [, b]) => a.header.createdAt - b.header.createdAt);
  const task = ([, s]) => {
    const first = s.events.find((e) => e.type === "user/message" && e.data?.source?.kind === "user");
    return textOf(first?.data?.content);
  };
  const found = children.find((c) => task(c) === prompt) ?? children[0];
  return found?.[0];
}

/** A service scenario's model facts: it has no model tools, delegations, finals or plan mode. */
export const noModel = () => ({ tool_errors: [], handoffs: [], final: {}, plan_mode: {} });

/** The observation of a run that failed before it saw anything. */
export const failedRun = (error) => ({ outcome: "error", error, answerer_calls: 0, asked: [], direct: [], ...noModel() });

/** sessions: id -> {header, events}; windows: [{start, end, root}] per phase, in order. */
export function observe(sessions, windows, delegationTool) {
  const toolErrors = [];
  const handoffs = [];
  const claimed = new Set();
  const visited = new Set();

  const walk = (id, window) => {
    const session = sessions.get(id);
    if (session === undefined) return;
    visited.add(id);
    const calls = new Map(); // call id -> {name, child}
    for (const event of session.events) {
      if (event.time < window.start || event.time > window.end) continue;
      if (event.type === "tool/call") {
        const call = { name: event.data.name, child: undefined };
        calls.set(event.data.callId, call);
        if (call.name === delegationTool) {
          call.child = childOf(sessions, id, event.data.arguments, claimed);
          if (call.child !== undefined) {
            claimed.add(call.child);
            walk(call.child, window);
          }
        }
      } else if (event.type === "tool/result") {
        const block = (event.data.message.content ?? []).find((b) => b.type === "tool-result");
        if (block === undefined) continue;
        const call = calls.get(block.toolCallId) ?? { name: "?", child: undefined };
        const text = textOf(block.content);
        if (block.isError) {
          // A plain Error (upstream's exit_plan_mode checks, say) carries no name or code.
          const error = event.data.error ?? {};
          toolErrors.push({ agent: id, tool: call.name, code: error.code ?? "", name: published(error.name ?? "Error"), text: published(text) });
        } else if (call.child !== undefined) {
          handoffs.push({
            parent: id,
            child: call.child,
            child_final: lastSaid(sessions.get(call.child), event.time),
            tool_result: text,
          });
        }
      }
    }
  };

  for (const window of windows) {
    if (window.root !== undefined) walk(window.root, window);
  }
  // Whatever no phase reached (a child of a failed run, say) is still reported, oldest first.
  const rest = [...sessions.keys()].filter((id) => !visited.has(id));
  rest.sort((a, b) => sessions.get(a).header.createdAt - sessions.get(b).header.createdAt);
  for (const id of rest) walk(id, { start: -Infinity, end: Infinity });

  const final = {};
  const planMode = {};
  for (const [id, session] of sessions) {
    final[id] = lastSaid(session);
    const switches = session.events.filter((e) => e.type === "plan/mode");
    if (switches.length > 0) planMode[id] = switches.at(-1).data.active === true;
  }
  return { tool_errors: toolErrors, handoffs, final, plan_mode: planMode };
}
