/**
 * Ctrl+G of `pi`: the editor's text in `$VISUAL` / `$EDITOR` (pi's `externalEditor`
 * setting first, `nano` last), as pi 1.6.0 runs it: the text in a temp `prompt.md`, the
 * command split at spaces with the file as its last argument, in pi's cwd; the file's
 * text comes back (one trailing newline dropped) when the editor exits with 0.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The editor command, in pi's order: the setting, `$VISUAL`, `$EDITOR`, `nano`. */
export function editorCommand(setting: unknown, env: NodeJS.ProcessEnv = process.env): string {
  if (typeof setting === "string" && setting.trim() !== "") return setting;
  return env.VISUAL || env.EDITOR || "nano";
}

/** What came of it: the new text, or why the prompt stays as it was. */
export type EditorResult = { ok: true; text: string } | { ok: false; message: string };

/** Edit `text` with `command` on this terminal (the caller lent it out); resolves when the editor exits. */
export async function editExternally(command: string, text: string, cwd: string): Promise<EditorResult> {
  const dir = mkdtempSync(join(tmpdir(), "pi-editor-"));
  const file = join(dir, "prompt.md");
  try {
    writeFileSync(file, text, "utf8");
    const [program, ...args] = command.split(" ");
    process.stdout.write(`Launching external editor: ${command}\nPi will resume when the editor exits.\n`);
    const exit = await new Promise<number | string | null>((resolve) => {
      const child = spawn(program!, [...args, file], { stdio: "inherit", cwd });
      child.on("error", () => resolve(null));
      child.on("close", (code, signal) => resolve(code ?? signal));
    });
    if (exit === null) return { ok: false, message: `Failed to launch external editor: ${command}` };
    if (exit !== 0)
      return {
        ok: false,
        message: `External editor exited with ${typeof exit === "number" ? `code ${exit}` : exit}; prompt unchanged`,
      };
    return {
      ok: true,
      text: readFileSync(file, "utf8")
        .replace(/^\uFEFF/, "")
        .replace(/\n$/, ""),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
