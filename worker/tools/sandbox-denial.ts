/**
 * What a write the sandbox refused should say. Inside bwrap the file system outside the
 * writable folders is mounted read-only, so the kernel's answer is a bare `EROFS`, which
 * tells neither the model nor the person reading the transcript that the box is why, or
 * which flag opens the folder. Pure: the mode comes from the caller's environment.
 */
import { dirname } from "node:path";
import { insideSandbox } from "../../shared/sandbox.js";

/**
 * The error for a write to `absolute` that failed with `code`, when the sandbox refused
 * it (`EROFS` inside a sandbox); undefined otherwise, so the caller keeps its own wording
 * (and pi's, outside a sandbox).
 */
export function sandboxWriteDenial(
  path: string,
  absolute: string,
  code: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const mode = insideSandbox(env);
  if (code !== "EROFS" || mode === undefined) return undefined;
  const folder = dirname(absolute);
  return (
    `Cannot write ${path} (resolved to ${absolute}): the sandbox (--sandbox ${mode}) keeps ${folder} read-only; ` +
    `only the project, the session folder, /tmp, the tool caches and --sandbox-write folders can be written. ` +
    `Write inside the project instead, or ask the user to start the agent again with --sandbox-write ${folder} (or --sandbox off).`
  );
}

/**
 * The note for a shell command that failed inside the sandbox and whose output shows a
 * refused write ("Read-only file system", what coreutils, git and most tools print for
 * `EROFS`); undefined outside a sandbox, on success, or when nothing was refused. The
 * command's own output stays as it is: this only names the box and the flag, since the
 * folder cannot be known from a shell's message in general.
 */
export function sandboxBashDenial(
  output: string,
  exitCode: number | null,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const mode = insideSandbox(env);
  if (mode === undefined || exitCode === 0 || !/Read-only file system/.test(output)) return undefined;
  return (
    `Note: the sandbox (--sandbox ${mode}) keeps everything but the project, the session folder, /tmp, ` +
    `the tool caches and --sandbox-write folders read-only, which is why a write above was refused. ` +
    `Write inside the project instead, or ask the user to start the agent again with --sandbox-write DIR (or --sandbox off).`
  );
}
