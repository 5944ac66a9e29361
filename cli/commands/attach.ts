/** `pi-orch attach NAME`: follow an agent live, as a readable transcript or raw events. */
import { piOrchCommand } from "../../shared/cli-hint.js";
import type { Command } from "commander";
import type { IpcStreamMessage } from "../../shared/schema/ipc.js";
import { CliError, runAction, type CliContext } from "../context.js";
import { colorStatus } from "./format.js";
import { nonNegativeInt } from "./options.js";

/** Register `attach`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command("attach")
    .argument("<agent>", "agent name or unique id prefix")
    .description("follow an agent live: assistant text as it streams, tool calls and results, status changes")
    .option(
      "--since <seq>",
      "first replay the events after this sequence number (0: everything still in memory)",
      nonNegativeInt,
    )
    .option("--json", "print raw stream messages as JSON lines ({type, agent, seq, at, event})")
    .addHelpText(
      "after",
      `
Ctrl-C detaches (the agent keeps running). The status line on stderr names the last
sequence number, so a later attach --since N continues without a gap.

Examples:
  pi-orch attach fix-login
  pi-orch attach fix-login --since 0          replay what the supervisor still holds, then follow
  pi-orch attach fix-login --json | jq -c 'select(.event.type=="tool_execution_start")'`,
    )
    .action((agent: string, opts: { since?: number; json?: boolean }) =>
      runAction(ctx, async () => {
        const client = await ctx.client();
        try {
          const info = await client.status(agent);
          if (opts.since !== undefined && opts.since > info.lastSeq) {
            throw new CliError(
              `--since ${opts.since} is past the last event of ${info.name} (${info.lastSeq}); give ${info.lastSeq} or less, or leave it out to follow from now`,
              2,
            );
          }
          const { TranscriptRenderer } = await import("./transcript.js");
          const renderer = new TranscriptRenderer({ write: (s) => ctx.write(s), colors: ctx.color });
          let lastSeq = opts.since ?? info.lastSeq;
          const onMessage = (m: IpcStreamMessage) => {
            if (m.type === "event") lastSeq = m.seq;
            if (opts.json) process.stdout.write(`${JSON.stringify(m)}\n`);
            else renderer.feed(m);
          };
          await client.subscribe({ agents: [info.name], since: opts.since }, onMessage);
          ctx.err(
            ctx.color.dim(
              `attached to ${info.name} (${colorStatus(info.status, ctx.color)}${ctx.color.dim(`, event ${info.lastSeq}`)}); Ctrl-C detaches`,
            ),
          );
          let detached = false;
          const detach = () => {
            detached = true;
            void client.close();
          };
          process.once("SIGINT", detach);
          process.once("SIGTERM", detach);
          await client.closed;
          process.off("SIGINT", detach);
          process.off("SIGTERM", detach);
          renderer.end();
          ctx.err(
            ctx.color.dim(
              detached
                ? `detached at event ${lastSeq}; continue with ${piOrchCommand(`attach ${info.name} --since ${lastSeq}`, ctx.homeFlag())}`
                : `the supervisor closed the stream at event ${lastSeq} (it shut down?); see ${piOrchCommand("list", ctx.homeFlag())}`,
            ),
          );
          return 0;
        } finally {
          // An error before the stream ends (unknown agent, refused subscribe) must not leave the socket holding the process open.
          await client.close();
        }
      }),
    );
}
