// Runs one service-level scenario (every phase a direct `ask`) against the published upstream
// seam: UserQuestionService from @deepseek-ai/dsh-user-questions, with AgentRegistry
// (ctx.agents) from @deepseek-ai/dsh-agent, on a @deepseek-ai/cordis Context. It mirrors the
// reference's harness/run/_direct.py; scenarios/INTERPRETING.md is the contract.
//
// Nothing here writes to stdout: adapter.mjs owns the protocol.

import { createRequire } from "node:module";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { ScenarioError, describe, isObject, show, toItem } from "./common.mjs";
import { Answerer } from "./human.mjs";
import { failedRun, noModel } from "./sessions.mjs";
import { buildEntry, loadBuild, published } from "./under-test.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));

// Scenario feature tags (scenarios/schema.json, $defs/feature) this adapter can run: direct
// ask phases, with or without an intent, a registry or a provider, and reporting a hang.
export const FEATURES = ["service", "intent", "hang", "no-registry", "no-answerer", "provider-lifecycle"];
// What reached the human, for the hang report: the point of most scenarios is that it never
// does, so a regression should say who got through.
const reachedBy = (who) => `${who} reached the human, and the answerer never answers`;
const PACKAGES = [
  "@deepseek-ai/dsh-user-questions",
  "@deepseek-ai/dsh-agent",
  "@deepseek-ai/cordis",
];

// -- the upstream packages -----------------------------------------------------------------

/** Imported lazily, so that adapter.mjs can route console output to stderr first. The
 * service is the published package's, or the build NODE_DSH_USER_QUESTIONS names. */
export async function loadLibraries() {
  const [cordis, agent] = await Promise.all([import("@deepseek-ai/cordis"), import("@deepseek-ai/dsh-agent")]);
  const questions =
    buildEntry() === undefined
      ? { ...(await import("@deepseek-ai/dsh-user-questions")), provides: "userQuestions" }
      : await loadBuild(HERE);
  return {
    Context: cordis.Context,
    AgentRegistry: agent.AgentRegistry,
    UserQuestionService: questions.UserQuestionService,
    UserQuestionError: questions.UserQuestionError,
    provides: questions.provides,
  };
}

/** For hello's `runtime`: the versions actually installed, not the ones package.json asks for. */
export function runtimeDescription() {
  const require = createRequire(import.meta.url);
  const entry = buildEntry();
  const parts = PACKAGES.map((name) => {
    if (name === PACKAGES[0] && entry !== undefined) return `user-questions from ${entry}`;
    try {
      return `${name}@${require(`${name}/package.json`).version}`;
    } catch {
      return `${name}@?`;
    }
  });
  return `${parts[0]} (with ${parts.slice(1).join(", ")}) on node ${process.version}`;
}

// -- skipping -------------------------------------------------------------------------------

/** Why this adapter cannot run the scenario (then it is skipped), or null. */
function skipReason(scenario) {
  if (Array.isArray(scenario.features)) {
    const missing = scenario.features.filter((tag) => !FEATURES.includes(tag));
    if (missing.length > 0) {
      return (
        `needs feature(s) ${missing.map(show).join(", ")}; this adapter runs only ` +
        `${FEATURES.join(", ")} (service-level scenarios: direct ask phases, no model)`
      );
    }
  }
  for (const [index, phase] of scenario.phases.entries()) {
    if (!isObject(phase)) continue; // not a phase at all: runScenario reports it
    const kind = ["start", "resume"].find((k) => Object.hasOwn(phase, k));
    if (kind === undefined) continue;
    const agent = typeof phase[kind] === "string" ? phase[kind] : show(phase[kind]);
    return (
      `phase ${index + 1} is \`${kind}: ${agent}\`, which drives a model; this adapter ` +
      "runs only service-level scenarios (direct `ask` phases, feature `service`)"
    );
  }
  const guard = scenario.guard;
  if (guard !== undefined && guard !== "runtime-ownership") {
    return (
      `guard ${show(guard)} is a test-only caller-check variant of the reference runtime; ` +
      "the upstream seam has only its own check (runtime-ownership)"
    );
  }
  return null;
}

// -- one ask phase --------------------------------------------------------------------------

/** A stand-in Agent: the registry needs `id` equal to `session.id`, and the seam compares
 * objects. Its session has a durable header: the lineage a live entry declares
 * (`session: {delegation_depth, parent_session}`), else one with neither field, the absent
 * case the document names. A build of the service that reads
 * `session.header.delegationDepth` (upstream before the fix) then shows what it does with it,
 * instead of throwing a TypeError. */
function makeAgent(id, lineage) {
  const header = { id };
  if (isObject(lineage)) {
    if (lineage.parent_session !== undefined && lineage.parent_session !== null) header.parentSession = lineage.parent_session;
    if (lineage.delegation_depth !== undefined && lineage.delegation_depth !== null) header.delegationDepth = lineage.delegation_depth;
  }
  return { id, session: { id, header } };
}

/** `live`: registry entries [{agent, owner?}] in the order they are entered. */
function liveEntries(ask) {
  const live = ask.live ?? [];
  if (!Array.isArray(live)) throw new ScenarioError("ask.live must be a list of {agent, owner?}");
  return live.map((entry, j) => {
    if (!isObject(entry) || typeof entry.agent !== "string") {
      throw new ScenarioError(`ask.live[${j}] must be {agent: NAME, owner?: NAME | null}`);
    }
    const owner = entry.owner ?? null;
    if (owner !== null && typeof owner !== "string") {
      throw new ScenarioError(`ask.live[${j}].owner must be an agent name or null`);
    }
    return { agent: entry.agent, owner, session: entry.session };
  });
}

function names(ask, key) {
  const value = ask[key] ?? [];
  if (!Array.isArray(value) || !value.every((n) => typeof n === "string")) {
    throw new ScenarioError(`ask.${key} must be a list of agent names`);
  }
  return value;
}

/** `provider: [register | dispose]`, in order, on the phase's service: `register` a second
 * provider (its human dismisses every question, ASK_CANCELLED), `dispose` the world's with
 * the disposer its registration returned. -> `{registrations}` (one per register: null when
 * accepted, else the UserQuestionError registerProvider threw), or `{}` with no register. */
function providerCalls(lib, service, dispose, calls) {
  if (!Array.isArray(calls)) throw new ScenarioError("ask.provider must be a list of register or dispose");
  const registrations = [];
  for (const call of calls) {
    if (call === "dispose") {
      if (dispose === undefined) throw new ScenarioError("ask.provider: dispose needs the world's provider; answerer: none registers none");
      dispose();
    } else if (call === "register") {
      const dismissing = {
        async ask() {
          throw new lib.UserQuestionError("the user cancelled ask_user_question", "ASK_CANCELLED");
        },
      };
      try {
        service.registerProvider(dismissing);
        registrations.push(null);
      } catch (error) {
        if (!(error instanceof lib.UserQuestionError)) throw error;
        registrations.push({ name: published(error.name), code: error.code, message: published(error.message) });
      }
    } else {
      throw new ScenarioError(`ask.provider: ${show(call)} is neither register nor dispose`);
    }
  }
  return registrations.length > 0 ? { registrations } : {};
}

/** One direct phase: a fresh Context, registry and service; the declared registry; one ask(). */
async function runPhase(lib, ask, registryPresent, answerer) {
  const { Context, AgentRegistry, UserQuestionService, UserQuestionError } = lib;
  if (!isObject(ask)) throw new ScenarioError("an ask phase must be an object");
  const live = liveEntries(ask);
  const reenter = names(ask, "reenter");
  const detach = names(ask, "detach");
  const detachReplaced = names(ask, "detach_replaced");
  const caller = ask.caller ?? null;
  if (caller !== null && typeof caller !== "string") throw new ScenarioError("ask.caller must be a name");
  const callerObject = ask.caller_object ?? "live";
  if (callerObject !== "live" && callerObject !== "stale") {
    throw new ScenarioError(`ask.caller_object must be live or stale, not ${show(callerObject)}`);
  }

  // Runtime ownership is process-local: every phase starts from a new Context.
  const ctx = new Context();
  try {
    if (registryPresent) await ctx.plugin(AgentRegistry);
    await ctx.plugin(UserQuestionService);
    const service = ctx.get(lib.provides);
    if (service === undefined) throw new Error(`the ${lib.provides} service did not become available`);
    const agents = registryPresent ? ctx.get("agents") : undefined;
    if (registryPresent && agents === undefined) throw new Error("the agents service did not become available");
    const provider = answerer.provider();
    const dispose = provider !== undefined ? service.registerProvider(provider) : undefined;
    const registrations = providerCalls(lib, service, dispose, ask.provider ?? []);

    // Without a registry the entries are still made: a caller needs its object either way.
    const objects = new Map();
    const previous = new Map();
    const detachers = new Map();
    const replaced = new Map(); // name -> the detach function of the entry reenter replaced
    const owners = new Map();
    const ownerObject = (name, owner) => {
      if (owner === null) return undefined;
      if (!objects.has(owner)) {
        throw new ScenarioError(`owner ${show(owner)} of ${show(name)} must be entered in live before it`);
      }
      return objects.get(owner);
    };
    const lineages = new Map(live.map((entry) => [entry.agent, entry.session]));
    for (const { agent: name, owner } of live) {
      if (objects.has(name)) throw new ScenarioError(`live: ${show(name)} is already entered; use reenter`);
      const agent = makeAgent(name, lineages.get(name));
      const ownedBy = ownerObject(name, owner);
      objects.set(name, agent);
      owners.set(name, owner);
      if (agents !== undefined) detachers.set(name, agents.enter(agent, ownedBy));
    }
    for (const name of reenter) {
      if (!objects.has(name)) throw new ScenarioError(`reenter: ${show(name)} is not entered in live`);
      previous.set(name, objects.get(name));
      const agent = makeAgent(name, lineages.get(name));
      objects.set(name, agent);
      if (agents !== undefined) {
        detachers.get(name)();
        replaced.set(name, detachers.get(name));
        detachers.set(name, agents.enter(agent, ownerObject(name, owners.get(name))));
      }
    }
    for (const name of detach) {
      if (!objects.has(name)) throw new ScenarioError(`detach: ${show(name)} is not entered in live`);
      detachers.get(name)?.();
    }
    // A replaced entry's detach, called again, must leave the entry that now holds the id.
    for (const name of detachReplaced) replaced.get(name)?.();

    const request = {
      questions: Array.isArray(ask.questions) ? ask.questions.map(toItem) : ask.questions,
      signal: ask.aborted === true ? AbortSignal.abort() : new AbortController().signal,
    };
    // An agentless call sends no `agent` field at all, not `agent: undefined`.
    if (caller !== null) {
      if (callerObject === "stale") {
        request.agent = previous.get(caller) ?? makeAgent(caller, lineages.get(caller));
      } else if (objects.has(caller)) {
        request.agent = objects.get(caller);
      } else {
        throw new ScenarioError(`caller ${show(caller)} is not entered in live; enter it, or set caller_object: stale`);
      }
    }

    // Race ask() against "the provider was reached and will never answer".
    let reached = false;
    const hang = new Promise((resolve) => {
      answerer.onReached = () => {
        reached = true;
        resolve();
      };
    });
    // Wrapped so that a synchronous throw from ask() is recorded like a rejection.
    const settled = (async () => service.ask(request))().then(
      (value) => ({ value }),
      (error) => ({ error }),
    );
    const first = await Promise.race([settled, hang.then(() => ({ hang: true }))]);
    answerer.onReached = () => {};
    if (reached || first.hang) {
      const owner = owners.get(caller);
      const who =
        caller === null
          ? "an agentless call"
          : callerObject === "stale"
            ? `a stale object with ${caller}'s id`
            : `${caller} (${owner === null || owner === undefined ? "a root" : `owned by ${owner}`})`;
      return { hang: true, who };
    }
    if ("error" in first) {
      const error = first.error;
      if (error instanceof UserQuestionError) {
        return {
          entry: {
            ...registrations,
            caller,
            answers: null,
            error: { name: published(error.name), code: error.code, message: published(error.message) },
          },
        };
      }
      throw error;
    }
    const value = first.value;
    return { entry: { ...registrations, caller, answers: isObject(value) ? value.answers ?? null : null, error: null } };
  } finally {
    // Not awaited: the result must not wait on teardown (a hung provider call may still be
    // pending), and a failing teardown is logged rather than made the scenario's outcome.
    Promise.resolve()
      .then(() => ctx.fiber.dispose())
      .catch((error) => process.stderr.write(`node-dsh: disposing a phase context failed: ${describe(error)}\n`));
  }
}

// -- one scenario ---------------------------------------------------------------------------

async function runPhases(lib, scenario) {
  const direct = [];
  let answerer = null;
  try {
    const world = scenario.world ?? {};
    if (!isObject(world)) throw new ScenarioError("world must be an object");
    const registry = world.registry ?? "present";
    if (registry !== "present" && registry !== "absent") {
      throw new ScenarioError(`world.registry must be present or absent, not ${show(registry)}`);
    }
    answerer = new Answerer(world, lib.UserQuestionError);
    for (const [index, phase] of scenario.phases.entries()) {
      if (!isObject(phase) || !Object.hasOwn(phase, "ask")) {
        throw new ScenarioError(`phase ${index + 1} is neither an ask phase nor a model phase`);
      }
      const result = await runPhase(lib, phase.ask, registry === "present", answerer);
      if (result.hang) {
        return { outcome: "hang", error: reachedBy(result.who), answerer_calls: answerer.calls, asked: answerer.asked, direct, ...noModel() };
      }
      direct.push(result.entry);
    }
    return { outcome: "completed", error: null, answerer_calls: answerer.calls, asked: answerer.asked, direct, ...noModel() };
  } catch (error) {
    return { ...failedRun(describe(error)), answerer_calls: answerer?.calls ?? 0, asked: answerer?.asked ?? [], direct };
  }
}

/** One run line's scenario -> `{skip: reason}` or `{observation}`; never throws. */
export async function runScenario(lib, scenario) {
  if (!isObject(scenario) || !Array.isArray(scenario.phases) || scenario.phases.length === 0) {
    return {
      observation: failedRun("ScenarioError: the run line's scenario must be a scenario document with a non-empty phases list"),
    };
  }
  try {
    const reason = skipReason(scenario);
    if (reason !== null) return { skip: reason };
    return { observation: await runPhases(lib, scenario) };
  } catch (error) {
    return { observation: failedRun(describe(error)) };
  }
}
