/**
 * A finished tool call's argument text made into its arguments, as pi 1.6's pi-ai does
 * (`parseToolCallArguments`, `repairJson`): a text that parses, or parses once raw control
 * characters and bad escapes inside its strings are repaired, is the arguments; any other
 * text gives `{}` and `argumentsError`, which the agent loop answers the model with (with
 * the text it sent). Pure.
 */

const VALID_ESCAPES = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);
const NAMED_CONTROLS: Record<string, string> = { "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** `json` with raw control characters inside strings escaped and a backslash before an invalid escape doubled. */
export function repairJson(json: string): string {
  let out = "";
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const ch = json[i]!;
    if (!inString) {
      out += ch;
      if (ch === '"') inString = true;
      continue;
    }
    if (ch === '"') {
      out += ch;
      inString = false;
      continue;
    }
    if (ch === "\\") {
      const next = json[i + 1];
      if (next === "u" && /^[0-9a-fA-F]{4}$/.test(json.slice(i + 2, i + 6))) {
        out += `\\u${json.slice(i + 2, i + 6)}`;
        i += 5;
      } else if (next !== undefined && VALID_ESCAPES.has(next)) {
        out += `\\${next}`;
        i += 1;
      } else out += "\\\\";
      continue;
    }
    const code = ch.charCodeAt(0);
    out += code <= 0x1f ? (NAMED_CONTROLS[ch] ?? `\\u${code.toString(16).padStart(4, "0")}`) : ch;
  }
  return out;
}

/**
 * JSON.parse's message as pi 1.6 words it: it runs on Node 22, whose V8 adds the line and
 * column to a position (`at position 6 (line 1 column 7)`); Node 20's leaves them out.
 */
function parseErrorText(error: unknown, text: string): string {
  const message = error instanceof Error ? error.message : String(error);
  const at = /at position (\d+)$/.exec(message);
  if (!at) return message;
  const before = text.slice(0, Number(at[1]));
  const line = before.split("\n").length;
  const column = before.length - before.lastIndexOf("\n");
  return `${message} (line ${line} column ${column})`;
}

function parseWithRepair(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch (error) {
    const repaired = repairJson(json);
    if (repaired === json) throw new Error(parseErrorText(error, json));
    try {
      return JSON.parse(repaired);
    } catch (again) {
      throw new Error(parseErrorText(again, repaired));
    }
  }
}

/** The arguments of a finished call's text, or `{}` and why the text is not a JSON object (pi's words). */
export function parseToolCallArguments(text: string): { arguments: Record<string, unknown>; argumentsError?: string } {
  if (!text?.trim()) return { arguments: {} };
  try {
    const parsed = parseWithRepair(text);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      throw new Error("Tool arguments must be a JSON object");
    return { arguments: parsed as Record<string, unknown> };
  } catch (error) {
    return {
      arguments: {},
      argumentsError: `${error instanceof Error ? error.message : String(error)}\n\nReceived arguments:\n${text}`,
    };
  }
}
