/**
 * An example extension: a guard that blocks `rm -rf` in bash, a `/hello` command
 * and a small `word_count` tool.
 *
 *   pi --mode rpc --extension examples/extensions/guard.ts
 *   pi -p -e examples/extensions/guard.ts "count the words in README.md"
 */
import { Type } from "typebox";
// In an extension of your own, import the type from "@mariozechner/pi-coding-agent" as pi documents it.
import type { ExtensionAPI } from "../../worker/extensions/types.js";

/** True when a command runs `rm` with both a recursive and a force flag (`-rf`, `-fr`, `-r -f`, `--recursive --force`, …). */
export function isRecursiveForceRm(command: string): boolean {
  return command.split(/[;&|\n]/).some((part) => {
    const words = part.trim().split(/\s+/);
    const rm = words.findIndex((w) => w === "rm" || w.endsWith("/rm"));
    if (rm < 0) return false;
    const flags = words.slice(rm + 1).filter((w) => w.startsWith("-"));
    const short = (letters: RegExp) => flags.some((f) => !f.startsWith("--") && letters.test(f));
    const recursive = short(/[rR]/) || flags.includes("--recursive");
    const force = short(/f/) || flags.includes("--force");
    return recursive && force;
  });
}

export default function guard(pi: ExtensionAPI): void {
  pi.on("tool_call", (event) => {
    if (event.toolName !== "bash") return;
    const command = String(event.input.command ?? "");
    if (isRecursiveForceRm(command)) {
      return {
        block: true,
        reason: `Blocked by guard.ts: "${command}" deletes recursively. Delete specific files instead.`,
      };
    }
  });

  pi.registerCommand("hello", {
    description: "Say hello (usage: /hello [name])",
    handler: (args: string, ctx) => {
      ctx.ui.notify(`Hello, ${args.trim() || "world"}! (cwd: ${ctx.cwd})`, "info");
    },
  });

  pi.registerTool({
    name: "word_count",
    label: "Word count",
    description: "Count the words, lines and characters of a text.",
    parameters: Type.Object({
      text: Type.String({ description: "The text to measure" }),
    }),
    async execute(_toolCallId, { text }) {
      const words = text.split(/\s+/).filter(Boolean).length;
      const lines = text === "" ? 0 : text.split("\n").length;
      return {
        content: [{ type: "text", text: `${words} words, ${lines} lines, ${text.length} characters` }],
        details: { words, lines, characters: text.length },
      };
    },
  });
}
