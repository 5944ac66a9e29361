/**
 * `pi-orch logs NAME`: an agent's event log (rendered, or raw with --json) or its
 * worker's stderr, read from `$PI_ORCH_HOME/logs/`; `--follow` keeps reading as it grows.
 * Works without a running supervisor (it reads agents.json to resolve the name).
 */
import { closeSync, existsSync, openSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { agentLogPaths } from "../../supervisor/event-log.js";
import { resolveAgentRef } from "../../supervisor/names.js";
import { loadRegistry } from "../../supervisor/registry.js";
import { CliError, runAction, type CliContext } from "../context.js";
import { TranscriptRenderer } from "./transcript.js";

/** Register `logs`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command("logs")
    .argument("<agent>", "agent name or unique id prefix")
    .description("print an agent's event log as a transcript (or its worker's stderr with --stderr)")
    .option("-f, --follow", "keep printing as the log grows (Ctrl-C to stop)")
    .option("--stderr", "print the worker's stderr log instead of events")
    .option("--json", "print events as raw JSON lines ({seq, at, event}); with --stderr one {line} per stderr line")
    .addHelpText(
      "after",
      `
Logs live in $PI_ORCH_HOME/logs/<name>.events.jsonl and <name>.stderr.log, rotated
by size (.1, .2, ...). This command reads the current file.

Examples:
  pi-orch logs fix-login
  pi-orch logs fix-login --stderr           why did the worker crash?
  pi-orch logs fix-login --follow --json`,
    )
    .action((agent: string, opts: { follow?: boolean; stderr?: boolean; json?: boolean }) =>
      runAction(ctx, async () => {
        const name = await resolveName(ctx, agent);
        const paths = agentLogPaths(join(ctx.home(), "logs"), name);
        const path = opts.stderr ? paths.stderr : paths.events;
        if (!existsSync(path) && !opts.follow) {
          ctx.err(`pi-orch: ${name} has no ${opts.stderr ? "stderr" : "event"} log yet (${path})`);
          return 0;
        }
        const renderer = new TranscriptRenderer({ write: (s) => ctx.write(s), colors: ctx.color });
        let partial = "";
        // A seq missing between two logged ones never reached the disk (dropped while it was full): said where it was.
        let lastLogged = 0;
        const onText = (text: string) => {
          if (opts.stderr && !opts.json) {
            ctx.write(text);
            return;
          }
          const lines = (partial + text).split("\n");
          partial = lines.pop()!;
          for (const line of lines) {
            if (opts.stderr) {
              process.stdout.write(`${JSON.stringify({ line })}\n`);
              continue;
            }
            if (line.trim() === "") continue;
            if (opts.json) {
              process.stdout.write(`${line}\n`);
              continue;
            }
            try {
              const entry = JSON.parse(line) as { seq: number; at: number; event: Record<string, unknown> };
              if (lastLogged > 0 && entry.seq > lastLogged + 1)
                renderer.feed({
                  type: "lagged",
                  agent: name,
                  from: lastLogged + 1,
                  to: entry.seq - 1,
                  reason: "not_logged",
                });
              lastLogged = Math.max(lastLogged, entry.seq);
              renderer.feed({ type: "event", agent: name, seq: entry.seq, at: entry.at, event: entry.event });
            } catch {
              ctx.out(ctx.color.red(`(unreadable log line) ${line.slice(0, 200)}`));
            }
          }
        };
        let offset = readFrom(path, 0, onText);
        if (!opts.follow) {
          // A last stderr line without its newline (a worker killed mid-write) is still a line.
          if (opts.stderr && opts.json && partial !== "")
            process.stdout.write(`${JSON.stringify({ line: partial })}\n`);
          renderer.end();
          return 0;
        }
        await new Promise<void>((resolveStop) => {
          const timer = setInterval(() => {
            // A rotated file starts over smaller than what was read.
            const size = fileSize(path);
            if (size !== null && size < offset) offset = 0;
            offset = readFrom(path, offset, onText);
          }, 200);
          const stop = () => {
            clearInterval(timer);
            resolveStop();
          };
          process.once("SIGINT", stop);
          process.once("SIGTERM", stop);
        });
        renderer.end();
        return 0;
      }),
    );
}

/** The agent's name: asked of a running supervisor, else looked up in agents.json. */
async function resolveName(ctx: CliContext, ref: string): Promise<string> {
  try {
    const client = await ctx.client({ autostart: false });
    try {
      return (await client.status(ref)).name;
    } finally {
      await client.close();
    }
  } catch (err) {
    if (!(err instanceof CliError)) throw err;
  }
  const { agents } = loadRegistry(ctx.home());
  if (agents.length === 0 && existsSync(agentLogPaths(join(ctx.home(), "logs"), ref).events)) return ref;
  return resolveAgentRef(agents, ref).name;
}

function fileSize(path: string): number | null {
  try {
    return statSync(path).size;
  } catch {
    return null;
  }
}

/** Hand everything from `offset` to the end to `onText`; returns the new offset. */
function readFrom(path: string, offset: number, onText: (text: string) => void): number {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return offset;
  }
  try {
    const buf = Buffer.alloc(64 * 1024);
    const decoder = new TextDecoder();
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, offset);
      if (n === 0) break;
      offset += n;
      onText(decoder.decode(buf.subarray(0, n), { stream: true }));
    }
    return offset;
  } finally {
    closeSync(fd);
  }
}
