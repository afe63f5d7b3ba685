// Another build of upstream's user-questions service, in place of the published one: how the
// gate is pointed at an upstream revision (say, the commit before the fix) without editing
// anything. NODE_DSH_USER_QUESTIONS names the build's plugin entry, e.g. .../lib/index.js.
//
// The service was renamed between the fix commit and the published 0.1.0-rc.8: the class
// UserInteractionService became UserQuestionService, UserInteractionError UserQuestionError,
// the context service `userInteraction` became `userQuestions`, and the texts that name the
// provider say "user-questions" for "user-interaction". The names below map the earlier
// spelling to the published one, so a revision is judged on what it does, not what it is
// called.

import { cpSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

export const ENV = "NODE_DSH_USER_QUESTIONS";

const EXPORTS = [
  ["UserInteractionService", "UserQuestionService"],
  ["UserInteractionError", "UserQuestionError"],
];
const TEXTS = [
  ["UserInteractionError", "UserQuestionError"],
  ["user-interaction provider", "user-questions provider"],
  ["user-interaction channel", "user-questions channel"],
];
// The context service each spelling provides, in the order a consumer looks for it.
export const SERVICE_NAMES = ["userQuestions", "userInteraction"];

/** The build's entry, or undefined for the published package. */
export function buildEntry() {
  const entry = process.env[ENV];
  return entry ? resolve(entry) : undefined;
}

/** Copy the build's folder under `home/.under-test/`, so that its bare imports
 * (@deepseek-ai/cordis, @deepseek-ai/dsh-llm) resolve to the very packages `home` runs, not
 * to copies beside the build. Returns the staged entry's path. */
export function stage(home) {
  const entry = buildEntry();
  if (!existsSync(entry)) throw new Error(`${ENV}=${entry} is not a file`);
  const target = join(home, ".under-test", basename(dirname(entry)));
  rmSync(target, { recursive: true, force: true });
  mkdirSync(dirname(target), { recursive: true });
  cpSync(dirname(entry), target, { recursive: true });
  return join(target, basename(entry));
}

/** The staged build's service and error classes under the published names, and the context
 * service name it provides. */
export async function loadBuild(home) {
  const module = await import(pathToFileURL(stage(home)).href);
  const named = { ...module };
  for (const [earlier, published] of EXPORTS) named[published] ??= module[earlier];
  if (typeof named.UserQuestionService !== "function" || typeof named.UserQuestionError !== "function") {
    throw new Error(`${ENV}: the build exports neither UserQuestionService/UserQuestionError nor UserInteractionService/UserInteractionError`);
  }
  const provides = module.UserQuestionService !== undefined ? "userQuestions" : "userInteraction";
  return { UserQuestionService: named.UserQuestionService, UserQuestionError: named.UserQuestionError, provides };
}

/** A name or text in the published spelling. */
export function published(text) {
  if (typeof text !== "string") return text;
  return TEXTS.reduce((out, [earlier, now]) => out.replaceAll(earlier, now), text);
}
