// keyless-harness adapter "node-dsh": the entry point. It speaks the JSON-lines protocol,
// version 1 (scenarios/INTERPRETING.md), on stdin/stdout. service.mjs runs service-level
// scenarios against the published upstream seam in this process; assembled.mjs runs the
// assembled ones on the published upstream CLI, one `dsh` process per phase. stdout carries
// protocol lines only; everything else goes to stderr. Plain ESM JavaScript, no build step;
// no network beyond the harness's loopback fake.

import {
  ASSEMBLED_FEATURES,
  DELEGATION,
  SESSION_HEADER,
  assembledSkip,
  runAssembled,
  runtimeDescription as cliDescription,
} from "./assembled.mjs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, isObject, show } from "./common.mjs";
import { FEATURES, loadLibraries, runScenario, runtimeDescription } from "./service.mjs";
import { failedRun } from "./sessions.mjs";

const PROTOCOL = 1;
const ADAPTER = "node-dsh";

// Nothing but protocol lines may reach stdout: route console output a library might produce
// to stderr. This runs before the upstream packages are imported (service.mjs loads them
// lazily).
for (const method of ["log", "info", "debug", "trace", "dir", "table"]) {
  console[method] = (...args) => console.error(...args);
}

// JSON.stringify leaves U+2028, U+2029 and U+0085 raw; some line readers split on them.
const LINE_BREAKS = /[\u0085\u2028\u2029]/g;
const escapeBreak = (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

function send(message) {
  process.stdout.write(JSON.stringify(message).replace(LINE_BREAKS, escapeBreak) + "\n");
}

function log(text) {
  process.stderr.write(`node-dsh: ${text}\n`);
}

function exit(code) {
  // Exit once everything written to stdout has been handed to the OS.
  process.stdout.write("", () => process.exit(code));
}

async function handleRun(lib, message) {
  const id = message.id;
  if (typeof id !== "string" || id === "") {
    send({ type: "error", message: "a run line needs a non-empty string id" });
    return;
  }
  const { skip, observation } = drivesModel(message.scenario)
    ? await runAssembledLine(lib, message)
    : await runScenario(lib, message.scenario);
  send(skip !== undefined ? { type: "skip", id, reason: skip } : { type: "result", id, observation });
}

/** An assembled scenario: some phase starts or resumes an agent (a model drives it). */
function drivesModel(scenario) {
  return isObject(scenario) && Array.isArray(scenario.phases) && scenario.phases.some((p) => isObject(p) && !Object.hasOwn(p, "ask"));
}

async function runAssembledLine(lib, message) {
  const skip = assembledSkip(message.scenario);
  if (skip !== null) return { skip };
  if (!isObject(message.model) || typeof message.model.base_url !== "string") {
    return { observation: failedRun("the run line has no model.base_url for an assembled scenario") };
  }
  try {
    return { observation: await runAssembled(message.scenario, message.model, message.backstop, lib.provides) };
  } catch (error) {
    log(`internal error: ${error?.stack ?? describe(error)}`);
    return { observation: failedRun(describe(error)) };
  }
}

/** Handles one line; returns an exit code to stop reading, or null to carry on. */
async function handleLine(lib, line) {
  let message;
  try {
    message = JSON.parse(line);
  } catch (error) {
    send({ type: "error", message: `malformed line, not JSON: ${error.message}` });
    return null;
  }
  if (!isObject(message) || typeof message.type !== "string") {
    send({ type: "error", message: "malformed line: a protocol line is a JSON object with a string 'type'" });
    return null;
  }
  switch (message.type) {
    case "hello":
      if (message.protocol !== PROTOCOL) {
        send({
          type: "error",
          message: `unsupported protocol ${show(message.protocol)}; adapter ${ADAPTER} speaks protocol ${PROTOCOL}`,
        });
        return 2;
      }
      send({
        type: "hello",
        protocol: PROTOCOL,
        adapter: ADAPTER,
        features: [...FEATURES, ...ASSEMBLED_FEATURES],
        // Which checkout's adapter this is, too: the harness picks the one beside the scenarios.
        runtime: `${runtimeDescription()}; ${cliDescription()} (adapter in ${dirname(fileURLToPath(import.meta.url))})`,
        session_header: SESSION_HEADER,
        delegation: DELEGATION,
      });
      return null;
    case "run":
      await handleRun(lib, message);
      return null;
    case "bye":
      return 0;
    default:
      send({ type: "error", message: `unknown message type ${show(message.type)}` });
      return null;
  }
}

async function main() {
  let lib;
  try {
    lib = await loadLibraries();
  } catch (error) {
    send({
      type: "error",
      message: `adapter ${ADAPTER} cannot load the upstream packages (${describe(error)}); run: npm ci --prefix adapters/node-dsh`,
    });
    exit(1);
    return;
  }

  // One line at a time, strictly in order: each line is handled after the previous one.
  const decoder = new TextDecoder("utf-8");
  let buffer = "";
  let chain = Promise.resolve(null);
  let stopped = false;
  const enqueue = (line) => {
    chain = chain.then(async (code) => {
      if (code !== null || stopped) return code;
      let next;
      try {
        next = await handleLine(lib, line.endsWith("\r") ? line.slice(0, -1) : line);
      } catch (error) {
        log(`internal error: ${error?.stack ?? describe(error)}`);
        send({ type: "error", message: `internal error: ${describe(error)}` });
        next = null;
      }
      if (next !== null) {
        stopped = true;
        process.stdin.pause();
        exit(next);
      }
      return next;
    });
  };
  process.stdin.on("data", (chunk) => {
    if (stopped) return;
    buffer += decoder.decode(chunk, { stream: true });
    let newline;
    while ((newline = buffer.indexOf("\n")) !== -1) {
      enqueue(buffer.slice(0, newline));
      buffer = buffer.slice(newline + 1);
    }
  });
  process.stdin.on("end", () => {
    buffer += decoder.decode();
    if (buffer.trim() !== "") enqueue(buffer);
    buffer = "";
    chain.then((code) => {
      if (code === null && !stopped) {
        stopped = true;
        exit(0);
      }
    });
  });
  process.stdin.on("error", (error) => {
    log(`stdin: ${describe(error)}`);
    if (!stopped) {
      stopped = true;
      exit(0);
    }
  });
}

// The reader went away (EPIPE): nobody is left to answer.
process.stdout.on("error", (error) => {
  log(`stdout: ${describe(error)}`);
  process.exit(error?.code === "EPIPE" ? 0 : 1);
});

process.on("unhandledRejection", (reason) => {
  log(`unhandled rejection: ${describe(reason)}`);
});

main().catch((error) => {
  log(`internal error: ${error?.stack ?? describe(error)}`);
  exit(1);
});
