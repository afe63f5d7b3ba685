// Small things every part of the adapter shares: value checks, error descriptions, and the
// scenario <-> upstream spelling of a question. No upstream package is imported here.

/** The scenario cannot be run as written (the harness validates scenarios, so this is rare). */
export class ScenarioError extends Error {
  constructor(message) {
    super(message);
    this.name = "ScenarioError";
  }
}

export const isObject = (value) => typeof value === "object" && value !== null && !Array.isArray(value);
export const show = (value) => JSON.stringify(value) ?? String(value);

export function describe(error) {
  if (error instanceof Error || (isObject(error) && typeof error.message === "string")) {
    return `${error.name ?? "Error"}: ${error.message}`;
  }
  return `${typeof error}: ${String(error)}`;
}

/** A scenario question -> the upstream AskUserQuestionItem (multi_select -> multiSelect). */
export function toItem(question) {
  if (!isObject(question)) return question; // passed as given: the seam decides
  return renameKey(question, "multi_select", "multiSelect");
}

/** What the answerer received -> the scenario's spelling, for the observation's `asked`. */
export function fromItem(item) {
  return isObject(item) ? renameKey(item, "multiSelect", "multi_select") : item;
}

function renameKey(object, from, to) {
  // fromEntries defines own properties, so a "__proto__" key stays data.
  return Object.fromEntries(Object.entries(object).map(([key, value]) => [key === from ? to : key, value]));
}
