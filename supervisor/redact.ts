/**
 * Secrets kept out of what clients and logs see (`list`, `status`, events): values of
 * environment variables whose names look like credentials, and the value of flags
 * such as `--api-key`. The registry keeps the real values (0600): a restart needs them.
 */

/** What a hidden value is replaced with. */
export const REDACTED = "<redacted>";

const SECRET_NAME = /key|token|secret|passw|credential|auth/i;
const SECRET_FLAG = /^--?[\w-]*(api-?key|token|secret|passw|credential)[\w-]*$/i;

/** A copy of `env` with credential-like values replaced; undefined stays undefined. */
export function redactEnv(env: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!env) return env;
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, SECRET_NAME.test(k) ? REDACTED : v]));
}

/** A copy of an argv with the values of secret flags (`--api-key X`, `--api-key=X`) replaced. */
export function redactArgv(argv: readonly string[] | undefined): string[] | undefined {
  if (!argv) return undefined;
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const eq = arg.indexOf("=");
    if (arg.startsWith("-") && eq > 0 && SECRET_FLAG.test(arg.slice(0, eq)))
      out.push(`${arg.slice(0, eq)}=${REDACTED}`);
    else if (SECRET_FLAG.test(arg) && i + 1 < argv.length) out.push(arg, REDACTED), i++;
    else out.push(arg);
  }
  return out;
}
