/**
 * Values of an MCP server's `env` and `headers` as pi 1.6.0 resolves them: `${NAME}` and
 * `$NAME` are environment variables (`$$` is a `$`, `$!` a `!`), and a value that starts
 * with `!` is a shell command whose trimmed output is the value. A variable that is unset
 * or a command that fails is an error naming the server, the field and the variable.
 */
import { execSync } from "node:child_process";
import { parseTemplate } from "../../shared/config-template.js";

/** Resolve one value; `what` names it in the error (`MCP server "docs" env "TOKEN"`). */
export function resolveConfigValue(value: string, what: string, env: NodeJS.ProcessEnv = process.env): string {
  if (value.startsWith("!")) {
    const command = value.slice(1);
    let output: string;
    try {
      output = execSync(command, { encoding: "utf8", timeout: 10_000, stdio: ["ignore", "pipe", "ignore"] }).trim();
    } catch {
      output = "";
    }
    if (!output) throw new Error(`Failed to resolve ${what} from shell command: ${command}`);
    return output;
  }
  const parts = parseTemplate(value);
  const missing = [...new Set(parts.flatMap((p) => (p.type === "env" && !env[p.name] ? [p.name] : [])))];
  if (missing.length === 1) throw new Error(`Failed to resolve ${what} from environment variable: ${missing[0]}`);
  if (missing.length > 1)
    throw new Error(`Failed to resolve ${what} from environment variables: ${missing.join(", ")}`);
  return parts.map((p) => (p.type === "literal" ? p.value : env[p.name])).join("");
}

/** Every value of a record resolved (`env` or `headers` of server `server`). */
export function resolveRecord(
  record: Record<string, string> | undefined,
  what: string,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(record ?? {}))
    out[key] = resolveConfigValue(value, `${what} "${key}"`, env);
  return out;
}
