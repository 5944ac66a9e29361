/**
 * `pi-orch logs NAME`: an agent's event log (rendered, or raw with --json) or its
 * worker's stderr, read from `$PI_ORCH_HOME/logs/`; `--follow` keeps reading as it grows.
 * Works without a running supervisor (it reads agents.json to resolve the name).
 */
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import type { Command } from "commander";
import { findAgentRef } from "../../shared/agent-name.js";
import { agentLogPaths, logsDir, registryPath } from "../../shared/paths.js";
import type { AgentRef } from "../../shared/schema/agent.js";
import { CliError, runAction, type CliContext } from "../context.js";

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
        const paths = agentLogPaths(logsDir(ctx.home()), name);
        const path = opts.stderr ? paths.stderr : paths.events;
        if (!existsSync(path) && !opts.follow) {
          ctx.err(`pi-orch: ${name} has no ${opts.stderr ? "stderr" : "event"} log yet (${path})`);
          return 0;
        }
        const [{ TranscriptRenderer }, { LogLineReader }] = await Promise.all([
          import("./transcript.js"),
          import("../../shared/event-replay.js"),
        ]);
        const renderer = new TranscriptRenderer({ write: (s) => ctx.write(s), colors: ctx.color });
        const reader = new LogLineReader();
        let partial = "";
        const onText = (text: string) => {
          if (opts.stderr && !opts.json) {
            ctx.write(text);
            return;
          }
          if (opts.stderr) {
            const lines = (partial + text).split("\n");
            partial = lines.pop()!;
            for (const line of lines) process.stdout.write(`${JSON.stringify({ line })}\n`);
            return;
          }
          for (const { line, entry, missing } of reader.feed(text)) {
            if (opts.json) process.stdout.write(`${line}\n`);
            else if (!entry) ctx.out(ctx.color.red(`(unreadable log line) ${line.slice(0, 200)}`));
            else {
              // Seqs between two logged ones never reached the disk (dropped while it was full): said where they were.
              if (missing) renderer.feed({ type: "lagged", agent: name, ...missing, reason: "not_logged" });
              renderer.feed({ type: "event", agent: name, seq: entry.seq, at: entry.at, event: entry.event });
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
  const agents = await registeredAgents(ctx.home());
  if (agents.length === 0 && existsSync(agentLogPaths(logsDir(ctx.home()), ref).events)) return ref;
  const found = findAgentRef(agents, ref);
  if ("problem" in found) throw new CliError(found.problem);
  return found.agent.name;
}

/**
 * The names and ids in agents.json, read only: a damaged file is the supervisor's to set
 * aside and salvage, so here it gives none (and a name with a log is still found).
 */
async function registeredAgents(home: string): Promise<AgentRef[]> {
  let rows: unknown;
  try {
    rows = (JSON.parse(readFileSync(registryPath(home), "utf8")) as { agents?: unknown } | null)?.agents;
  } catch {
    return [];
  }
  if (!Array.isArray(rows)) return [];
  const [{ AgentRef }, { checker }] = await Promise.all([
    import("../../shared/schema/agent.js"),
    import("../../shared/validate.js"),
  ]);
  const check = checker(AgentRef);
  return rows.flatMap((row) => {
    const checked = check(row);
    return checked.ok ? [checked.value] : [];
  });
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
