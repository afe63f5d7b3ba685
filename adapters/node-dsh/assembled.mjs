// Runs one assembled scenario (a model drives the delegation) on the published upstream CLI,
// `dsh --profile headless`, one process per phase, with its model provider pointed at the
// harness's scripted fake over loopback. The observation is read from upstream's own durable
// session logs; agents are reported by upstream's session ids, which the harness reads back
// as the scenario's names (the fake keys each conversation on `x-deepseek-harness-session-id`).
//
// Nothing here writes to stdout: adapter.mjs owns the protocol.

import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { observe } from "./sessions.mjs";
import { fromItem } from "./common.mjs";
import { buildEntry, stage } from "./under-test.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const CLI = join(HERE, "dsh");
const BIN = join(CLI, "node_modules", "@deepseek-ai", "dsh", "lib", "bin.js");
const PLUGINS = join(CLI, "plugins");
// The provider will not start without a key. This one is a dummy, and plugins/keyless.mjs
// keeps it (and any authorization header) off every request to the fake.
const DUMMY_KEY = "keyless-harness-dummy-key";

export const ASSEMBLED_FEATURES = ["assembled", "concurrent-children", "interrupt", "nested-delegation", "no-user-questions", "parallel-calls", "plan-mode", "resume"];
// How upstream's model is told apart and how it delegates (hello: session_header, delegation).
// run_in_background defaults to true upstream, and then the parent does not wait for its child.
export const SESSION_HEADER = "x-deepseek-harness-session-id";
export const DELEGATION = {
  tool: "subagent",
  arguments: { description: "{name}", prompt: "{prompt}", run_in_background: false },
};

const show = (value) => JSON.stringify(value) ?? String(value);

/** Why the CLI cannot run here (then assembled scenarios are skipped, saying so), or null. */
export function cliProblem() {
  const node = process.env.NODE_DSH_NODE;
  if (!node) {
    return (
      "no Node.js >= 22.15 to run the upstream CLI (NODE_DSH_NODE is unset; the harness sets it " +
      "from adapters/toolchain on linux-x64, or from a node >= 22.15 on PATH)"
    );
  }
  if (!existsSync(BIN)) return `the upstream CLI is not installed (${BIN} is missing); rerun harness run --adapter node-dsh`;
  return null;
}

/** For hello's `runtime`: what is installed and what runs it, not what package.json asks for. */
export function runtimeDescription() {
  const problem = cliProblem();
  if (problem !== null) return `no upstream CLI: ${problem}`;
  const version = JSON.parse(readFileSync(join(CLI, "node_modules", "@deepseek-ai", "dsh", "package.json"), "utf8")).version;
  const node = execFileSync(process.env.NODE_DSH_NODE, ["--version"], { encoding: "utf8" }).trim();
  const service = buildEntry() === undefined ? "" : `, user-questions from ${buildEntry()}`;
  return `@deepseek-ai/dsh@${version} headless on node ${node}${service}`;
}

// -- what this runtime cannot do ------------------------------------------------------------

/** Whether each phase's root and delegated children start in plan mode: the plugin can set it
 * for the root, or for every child, not child by child. */
function planModeFor(scenario, root) {
  const agents = scenario.agents;
  const below = [];
  const frontier = [root];
  while (frontier.length > 0) {
    const parent = frontier.pop();
    for (const [name, spec] of Object.entries(agents)) {
      if (spec.spawned_by === parent) {
        below.push(name);
        frontier.push(name);
      }
    }
  }
  const children = new Set(below.map((name) => agents[name].plan_mode === true));
  return { root: agents[root]?.plan_mode === true, children };
}

/** Why upstream's headless CLI cannot run this assembled scenario, or null. */
export function assembledSkip(scenario) {
  const problem = cliProblem();
  if (problem !== null) return problem;
  if ((scenario.guard ?? "runtime-ownership") !== "runtime-ownership") {
    return `guard ${show(scenario.guard)} is a test-only caller-check variant of the reference runtime; upstream has only its own check`;
  }
  if ((scenario.faults ?? []).length > 0) {
    return "faults are test-only hooks inside the reference runtime's tools; upstream's tools have none";
  }
  const overridden = Object.entries(scenario.agents ?? {}).filter(([, spec]) => spec.session !== undefined);
  if (overridden.length > 0) {
    return `agent ${overridden[0][0]} overrides its durable session header, a test-only hook upstream does not have`;
  }
  if ((scenario.world?.registry ?? "present") === "absent") {
    return "upstream's headless profile cannot run a delegation without its agent registry (ctx.agents)";
  }
  for (const [index, phase] of scenario.phases.entries()) {
    if (Object.hasOwn(phase, "ask")) {
      return `phase ${index + 1} is a direct ask; this adapter runs an assembled scenario's phases through the CLI only`;
    }
    const root = phase.start ?? phase.resume;
    if (planModeFor(scenario, root).children.size > 1) {
      return `some of ${root}'s descendants start in plan mode and some do not; the plan-mode plugin sets it for every child or none`;
    }
  }
  return null;
}

// -- one phase: one dsh process -------------------------------------------------------------

const row = (lines) => lines.join("\n");

/** The --patch overlay for one phase. Plugin rows name absolute paths: a relative one would be
 * resolved against $DSH_HOME/profiles/headless/, not this folder. */
function overlay({ answerer, callsFile, baseURL, planAgents, resume, underTest, userQuestions }) {
  const rows = [
    // The launcher's patch-layer watcher needs the HMR service, which headless disables.
    row(["- id: hmr", "  disabled: false"]),
    // A title request per session would take a scripted turn no scenario has.
    row(["- id: session-title-llm", "  disabled: true"]),
    // Plain JSONL logs to read back (the default is zstd); a patch's config replaces the row's.
    row(["- id: session-persistence-jsonl", "  config:", "    root: !!js dshHomePath('sessions')", "    compression: none"]),
  ];
  const inserts = [row(["    - id: harness-keyless", `      name: ${show(join(PLUGINS, "keyless.mjs"))}`, `      config: ${show({ baseURL })}`])];
  if (userQuestions) {
    inserts.unshift(
      // Headless composes ctx.userQuestions (with the guard) but not the model-facing tool.
      row(["    - id: tool-ask-user", "      name: '@deepseek-ai/dsh-tool-ask-user'"]),
      row([
        "    - id: harness-answerer",
        `      name: ${show(join(PLUGINS, "answerer.mjs"))}`,
        `      config: ${show({ mode: answerer.mode, answers: answerer.answers, delayMs: answerer.delayMs, callsFile })}`,
      ]),
    );
  } else {
    // world.user_questions: absent. No service, so no tool or answerer beside it either.
    rows.push(row(["- id: user-questions", "  disabled: true"]));
  }
  if (planAgents !== "none") {
    inserts.push(
      row(["    - id: harness-plan-mode", `      name: ${show(join(PLUGINS, "plan-mode.mjs"))}`, `      config: ${show({ agents: planAgents })}`]),
    );
  }
  if (underTest !== undefined && userQuestions) {
    // Another build of the service (NODE_DSH_USER_QUESTIONS) in place of the published one;
    // consumers find it by its service name, under the published one if it has another.
    rows.push(row(["- id: user-questions", "  disabled: true"]));
    inserts.push(row(["    - id: user-questions-under-test", `      name: ${show(underTest.entry)}`]));
    if (underTest.provides !== "userQuestions") {
      inserts.push(row(["    - id: harness-user-questions-alias", `      name: ${show(join(PLUGINS, "user-questions-alias.mjs"))}`]));
    }
  }
  if (resume !== undefined) {
    rows.push(row(["- id: headless-runner", "  disabled: true"]));
    inserts.push(
      row([
        "    - id: harness-resume-runner",
        `      name: ${show(join(PLUGINS, "resume-runner.mjs"))}`,
        "      inject: [headlessStartup]",
        "      config:",
        "        task: !!js ctx.headlessStartup.task",
        `        resume: ${show(resume)}`,
      ]),
    );
  }
  return [...rows, "- insert:", ...inserts, ""].join("\n");
}

/** Run dsh once; settle on its exit, on the answerer being reached when it never answers, or
 * when it has shown no progress for `idleMs`: nothing on its stdout or stderr, and nothing
 * more written under `watched` (its session logs grow with each request to the fake). A dsh
 * that is slow but moving is never stopped. */
function runDsh({ args, cwd, env, callsFile, neverAnswers, idleMs, watched }) {
  return new Promise((resolve) => {
    const child = spawn(process.env.NODE_DSH_NODE, [BIN, ...args], {
      cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true, // its own process group: a kill reaches whatever it started
    });
    let stdout = "";
    let stderr = "";
    let lastSeen = Date.now();
    let doing = "starting";
    const saw = (what) => {
      lastSeen = Date.now();
      doing = what;
    };
    child.stdout.on("data", (chunk) => {
      stdout = (stdout + chunk).slice(-4000);
      saw("writing on its stdout");
    });
    child.stderr.on("data", (chunk) => {
      stderr = (stderr + chunk).slice(-4000);
      saw("writing on its stderr");
    });
    let settled = false;
    const finish = (result) => {
      if (settled) return;
      settled = true;
      clearInterval(watch);
      clearInterval(idle);
      if (result.kill) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
      resolve({ ...result, stdout, stderr });
    };
    // A reached tripwire never answers: report the hang the moment its call is recorded
    // (a whole line: the file exists a moment before its line is written).
    const watch = setInterval(() => {
      if (neverAnswers && readCalls(callsFile).length > 0) finish({ hang: true, kill: true });
    }, 10);
    let written = footprint(watched);
    const idle = setInterval(() => {
      const now = footprint(watched);
      if (now !== written) {
        written = now;
        saw("writing its session logs");
      }
      const still = Date.now() - lastSeen;
      if (still >= idleMs) finish({ timeout: true, kill: true, still, doing });
    }, 100);
    child.on("error", (error) => finish({ code: null, spawnError: error }));
    child.on("close", (code, signal) => finish({ code, signal }));
  });
}

/** Bytes written under `dir` so far (a sign of life): a walk of a handful of files. One
 * that dsh removes or renames meanwhile is left out, not an error. */
function footprint(dir) {
  let total = 0;
  const walk = (at) => {
    let entries = [];
    try {
      entries = readdirSync(at, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(at, entry.name);
      try {
        if (entry.isDirectory()) walk(path);
        else if (entry.isFile()) total += statSync(path).size;
      } catch {
        // gone meanwhile
      }
    }
  };
  walk(dir);
  return total;
}

function tail(text) {
  const lines = text.trim().split("\n").filter((l) => l.trim() !== "");
  return lines.slice(-3).join(" | ") || "(nothing on stderr)";
}

/** One assembled scenario -> an observation (raw facts; the harness judges). `provides`: the
 * context service name of the user-questions build under test. */
export async function runAssembled(scenario, model, backstopSeconds, provides) {
  const underTest = buildEntry() === undefined ? undefined : { entry: stage(CLI), provides };
  const work = mkdtempSync(join(process.env.NODE_DSH_TMP ?? tmpdir(), "node-dsh-"));
  const dirs = Object.fromEntries(["home", "dsh_home", "tmp", "cwd"].map((d) => [d, join(work, d)]));
  for (const dir of Object.values(dirs)) mkdirSync(dir);
  const callsFile = join(work, "answerer-calls.jsonl");
  const world = scenario.world ?? {};
  const answerer = {
    mode: world.answerer ?? "tripwire",
    answers: world.answers ?? {},
    delayMs: world.answer_delay_ms ?? 0,
  };
  // The backstop is seconds without progress; the harness waits a grace beyond it, so the
  // adapter gives up first and reports what it saw.
  const idleMs = (backstopSeconds ?? 60) * 1000;
  const env = {
    // Only what the CLI needs: nothing from the caller's environment (keys, proxies) leaks in.
    PATH: [dirname(process.env.NODE_DSH_NODE), process.env.PATH ?? ""].join(delimiter),
    LANG: "C.UTF-8",
    HOME: dirs.home,
    DSH_HOME: dirs.dsh_home,
    TMPDIR: dirs.tmp,
    XDG_CONFIG_HOME: join(dirs.home, ".config"),
    XDG_STATE_HOME: join(dirs.home, ".state"),
    DSH_TELEMETRY_DISABLED: "1",
    DSH_PERMISSION_MODE: "danger-full-access",
    DEEPSEEK_BASE_URL: model.base_url,
    DEEPSEEK_API_KEY: DUMMY_KEY,
  };
  const windows = [];
  const report = (outcome, error) => {
    const sessions = readSessions(dirs.dsh_home);
    for (const window of windows) window.root ??= rootMadeIn(sessions, window);
    const observed = observe(sessions, windows, DELEGATION.tool);
    const asked = readCalls(callsFile).map((c) => ({ caller: c.agent, questions: c.questions.map(fromItem) }));
    // No direct ask phases here (assembledSkip): `direct` is empty, and still sent.
    return { outcome, error, answerer_calls: asked.length, asked, direct: [], ...observed };
  };
  try {
    for (const [index, phase] of scenario.phases.entries()) {
      const kind = Object.hasOwn(phase, "start") ? "start" : "resume";
      const name = phase[kind];
      const plan = planModeFor(scenario, name);
      // A resumed session keeps the plan mode its log records; only new agents are set.
      const roles = [kind === "start" && plan.root && "root", plan.children.has(true) && "child"].filter(Boolean);
      const planAgents = roles.length === 2 ? "all" : (roles[0] ?? "none");
      const resume = kind === "resume" ? sessionIdOf(scenario, name, readSessions(dirs.dsh_home), windows) : undefined;
      if (kind === "resume" && resume === undefined) {
        return report("error", `phase ${index + 1}: no stored session is ${name}'s; resume needs one from an earlier phase`);
      }
      const overlayFile = join(work, `overlay-${index + 1}.yml`);
      writeFileSync(
        overlayFile,
        overlay({
          answerer,
          callsFile,
          baseURL: model.base_url,
          planAgents,
          resume,
          underTest,
          userQuestions: (scenario.world ?? {}).user_questions !== "absent",
        }),
      );
      const window = { start: Date.now(), end: Infinity, root: resume, name };
      windows.push(window);
      const ran = await runDsh({
        args: ["--profile", "headless", "--patch", overlayFile, phase.prompt],
        cwd: dirs.cwd,
        env,
        callsFile,
        neverAnswers: answerer.mode === "tripwire" || answerer.mode === "unreachable",
        idleMs,
        watched: dirs.dsh_home,
      });
      window.end = Date.now();
      window.root ??= rootMadeIn(readSessions(dirs.dsh_home), window);
      const where = `phase ${index + 1} (${kind}: ${name})`;
      if (ran.hang) return report("hang", reachedBy(callsFile));
      if (ran.timeout) {
        const still = (ran.still / 1000).toFixed(1);
        return report("error", `backstop: ${where}: dsh showed no progress for ${still} s (the limit is ${backstopSeconds ?? 60} s without progress); it was last seen ${ran.doing}; stopped, and nothing hung`);
      }
      if (ran.spawnError) return report("error", `${where}: cannot start dsh: ${ran.spawnError.message}`);
      if (ran.code !== 0) {
        return report("error", `${where}: dsh exited with status ${ran.code ?? ran.signal}: ${tail(ran.stderr)}`);
      }
    }
    return report("completed", null);
  } finally {
    if (process.env.NODE_DSH_KEEP) {
      process.stderr.write(`node-dsh: kept ${scenario.id}'s run in ${work}\n`);
    } else {
      rmSync(work, { recursive: true, force: true });
    }
  }
}

/** Who got through to the human: the point of most scenarios is that nobody does, so a
 * regression should say which agent it was (by session id; the harness shows the name). */
function reachedBy(callsFile) {
  const { agent, lineage } = readCalls(callsFile)[0];
  const who =
    agent === null
      ? "an agentless call"
      : lineage?.parentSession !== undefined
        ? `${agent} (a child of ${lineage.parentSession}, delegationDepth ${lineage.delegationDepth})`
        : `${agent} (a root)`;
  return `${who} reached the human, and the answerer never answers`;
}

/** Every call the answerer plugin recorded, in order. */
function readCalls(file) {
  if (!existsSync(file)) return [];
  // Whole lines only: the plugin's appendFileSync creates the file before it writes the line,
  // and a reader can come in between.
  const text = readFileSync(file, "utf8");
  return text
    .slice(0, text.lastIndexOf("\n") + 1)
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l));
}

/** Every session log under DSH_HOME: id -> {header, events}. Sessions are filed per working
 * directory, each in a folder named by its id. */
function readSessions(dshHome) {
  const sessions = new Map();
  const root = join(dshHome, "sessions");
  if (!existsSync(root)) return sessions;
  for (const cwd of readdirSync(root)) {
    for (const id of readdirSync(join(root, cwd))) {
      const file = join(root, cwd, id, "session.jsonl");
      if (!existsSync(file)) continue;
      const [header, ...events] = readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((l) => JSON.parse(l));
      sessions.set(header.id, { header, events: events.sort((a, b) => a.seq - b.seq) });
    }
  }
  return sessions;
}

/** The stored session that is scenario agent `name`: the root a phase ran, or the child
 * whose task was the prompt of the delegation that names it. */
function sessionIdOf(scenario, name, sessions, windows) {
  const parent = scenario.agents[name]?.spawned_by;
  if (parent === undefined) return windows.find((w) => w.name === name && w.root !== undefined)?.root;
  const parentId = sessionIdOf(scenario, parent, sessions, windows);
  const prompts = [];
  for (const step of scenario.agents[parent].script) {
    for (const call of step.calls ?? [step]) {
      if (call.call === "subagent" && call.args?.name === name) prompts.push(call.args.prompt);
    }
  }
  for (const [id, { header, events }] of sessions) {
    if (header.parentSession !== parentId) continue;
    const task = events.find((e) => e.type === "user/message" && e.data?.source?.kind === "user");
    if (prompts.includes(task?.data?.content?.[0]?.text)) return id;
  }
  return undefined;
}

/** The root session a start phase created: the one with no parent created in its window. */
function rootMadeIn(sessions, window) {
  for (const [id, { header }] of sessions) {
    if (header.parentSession === undefined && header.createdAt >= window.start && header.createdAt <= window.end) return id;
  }
  return undefined;
}
