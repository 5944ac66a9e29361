/**
 * A codemode script's source as pi 1.6.0 takes it: JavaScript, optionally led by one
 * `// @options: {"max_output_tokens": N, "timeout_ms": N}` line. Pure: it only splits and
 * checks, so a bad options line fails the call before any sandbox starts.
 */

const PREFIX = "// @options:";
const FIELDS = ["max_output_tokens", "timeout_ms"];
const FIELDS_TEXT = "`max_output_tokens` and `timeout_ms`";
/** `setTimeout`'s largest delay, which bounds `timeout_ms`. */
const MAX_TIMEOUT_MS = 2_147_483_647;

/** What the options line asked for. */
export interface ScriptOptions {
  maxOutputTokens?: number;
  timeoutMs?: number;
}

const isCount = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

function parseOptions(json: string): ScriptOptions {
  const notObject = `@options must be a JSON object with supported fields ${FIELDS_TEXT}`;
  if (json === "") throw new Error(notObject);
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    throw new Error(`@options must be valid JSON with supported fields ${FIELDS_TEXT}: ${(err as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error(notObject);
  const fields = value as Record<string, unknown>;
  for (const key of Object.keys(fields))
    if (!FIELDS.includes(key)) throw new Error(`@options only supports ${FIELDS_TEXT}; got \`${key}\``);
  const options: ScriptOptions = {};
  const { max_output_tokens: tokens, timeout_ms: timeout } = fields;
  if (tokens !== undefined) {
    if (!isCount(tokens)) throw new Error("@options field `max_output_tokens` must be a non-negative safe integer");
    options.maxOutputTokens = tokens;
  }
  if (timeout !== undefined) {
    if (!isCount(timeout) || timeout === 0 || timeout > MAX_TIMEOUT_MS)
      throw new Error(`@options field \`timeout_ms\` must be a positive integer up to ${MAX_TIMEOUT_MS}`);
    options.timeoutMs = timeout;
  }
  return options;
}

/**
 * Split the options line from the script. Throws for empty input, a bad options line, and
 * an options line below the first, which would otherwise be ignored without a word.
 */
export function parseScriptSource(input: string): { code: string; options: ScriptOptions } {
  if (input.trim() === "")
    throw new Error(
      'Expected JavaScript source text (non-empty). Provide JS only, optionally with a first line `// @options: {"max_output_tokens": 1000}`.',
    );
  const lines = input.split("\n");
  const misplaced = lines.findIndex((line, i) => i > 0 && line.trimStart().startsWith(PREFIX));
  if (misplaced !== -1)
    throw new Error(`The ${PREFIX} line must be the first line of the input; found one on line ${misplaced + 1}`);
  const first = (lines[0] ?? "").replace(/\r$/, "").trimStart();
  if (!first.startsWith(PREFIX)) return { code: input, options: {} };
  const newline = input.indexOf("\n");
  const code = newline === -1 ? "" : input.slice(newline);
  if (code.trim() === "")
    throw new Error("The @options line must be followed by JavaScript source on subsequent lines");
  return { code, options: parseOptions(first.slice(PREFIX.length).trim()) };
}

/** The name a script calls a tool by: characters not valid in an identifier become `_` (`my-tool` → `my_tool`). */
export function scriptIdentifier(name: string): string {
  let id = "";
  for (const char of name) id += (id === "" ? /^[A-Za-z_$]$/ : /^[A-Za-z0-9_$]$/).test(char) ? char : "_";
  return id === "" ? "_" : id;
}
