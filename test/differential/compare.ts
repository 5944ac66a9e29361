/**
 * Comparing what pi and our worker said, key by key, pure: a response or event is
 * reduced to its shape (keys, value types, and the values of the keys a client
 * branches on), and two shapes give a list of differences with their paths. Ids,
 * timestamps, paths, token counts and free text are compared by type only.
 */

type Json = unknown;

/** Keys whose string or number values a client acts on: compared by value. */
const VALUE_KEYS = new Set([
  "type",
  "command",
  "success",
  "role",
  "stopReason",
  "thinkingLevel",
  "level",
  "steeringMode",
  "followUpMode",
  "api",
  "provider",
  "reason",
  "source",
  "scope",
  "origin",
  "toolName",
  "name",
  "exitCode",
  "cancelled",
  "truncated",
  "isError",
  "isStreaming",
  "isCompacting",
  "aborted",
  "willRetry",
  "autoCompactionEnabled",
  "error",
  "finalError",
  "sessionName",
  "messageCount",
  "pendingMessageCount",
  "attempt",
  "maxAttempts",
  "success",
  "isScoped",
  "reasoning",
]);

/** One difference: where, and what each side had there. */
export interface Difference {
  path: string;
  pi: string;
  ours: string;
}

function describe(value: Json): string {
  if (value === undefined) return "(missing)";
  if (value === null) return "null";
  if (Array.isArray(value)) return `array(${value.length})`;
  if (typeof value === "object") return "object";
  return typeof value;
}

function scalar(key: string, value: Json): string {
  if (value === null || typeof value === "boolean") return JSON.stringify(value);
  if (VALUE_KEYS.has(key) && (typeof value === "string" || typeof value === "number")) return JSON.stringify(value);
  return typeof value;
}

/**
 * Differences between pi's value and ours at `path`. Objects compare key by key (a key
 * on one side only is a difference); arrays compare their lengths and then element by
 * element; scalars compare by type, or by value for the keys in VALUE_KEYS.
 */
export function compareShapes(pi: Json, ours: Json, path = "", key = ""): Difference[] {
  const at = path || "/";
  if (Array.isArray(pi) && Array.isArray(ours)) {
    const out: Difference[] = [];
    if (pi.length !== ours.length)
      out.push({ path: `${path}/length`, pi: String(pi.length), ours: String(ours.length) });
    for (let i = 0; i < Math.min(pi.length, ours.length); i++)
      out.push(...compareShapes(pi[i], ours[i], `${path}/${i}`, key));
    return out;
  }
  if (isObject(pi) && isObject(ours)) {
    const keys = [...new Set([...Object.keys(pi), ...Object.keys(ours)])].sort();
    return keys.flatMap((k) => compareShapes(pi[k], ours[k], `${path}/${k}`, k));
  }
  const left = scalarOrKind(key, pi);
  const right = scalarOrKind(key, ours);
  return left === right ? [] : [{ path: at, pi: left, ours: right }];
}

function isObject(value: Json): value is Record<string, Json> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function scalarOrKind(key: string, value: Json): string {
  if (value === undefined) return "(missing)";
  return typeof value === "object" && value !== null ? describe(value) : scalar(key, value);
}

/** A deliberate difference: the step, a path prefix within it, and why we differ. */
export interface Deliberate {
  step: string;
  /**
   * Matches a difference whose path starts with this (`responses/0/id`, `events`, ...);
   * a segment that is `*` matches any one segment (the usage of every event: events, `*`, usage).
   */
  path: string;
  reason: string;
}

/** Whether `path` is `prefix` or below it, a `*` segment of `prefix` matching any one segment. Pure. */
function under(path: string, prefix: string): boolean {
  const have = path.split("/");
  const want = prefix.split("/");
  return want.length <= have.length && want.every((seg, i) => seg === "*" || seg === have[i]);
}

/** Whether a difference of `step` is one of the deliberate ones. */
export function isDeliberate(list: readonly Deliberate[], step: string, diff: Difference): Deliberate | undefined {
  return list.find((d) => d.step === step && under(diff.path, d.path));
}
