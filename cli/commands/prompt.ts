/**
 * Talking to agents: `prompt` (one agent, `--to A,B` or `--all`; `--wait` streams the
 * reply and exits when they settle), `steer`, `follow-up` and `abort`. Here their flags
 * and help; what they do is in prompt-actions.ts, loaded when one runs.
 */
import type { Command } from "commander";
import { runAction, type CliContext } from "../context.js";
import { commaList } from "./options.js";

const actions = () => import("./prompt-actions.js");

/** Register `prompt`, `steer`, `follow-up` and `abort`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command("prompt")
    .argument("[words...]", "NAME TEXT, or only TEXT with --to/--all")
    .description("send a prompt to an agent (or --to A,B, or --all); --wait streams the reply until the run ends")
    .option("--to <agents>", "comma-separated agents to send the same prompt to", commaList)
    .option("--all", "send the prompt to every running agent")
    .option("--wait", "stream the reply and exit when every run has ended (exit 1 if a run ended in error)")
    .option(
      "--json",
      "print JSON: each agent's {agent, sent, error?}; with --wait each run's outcome instead of streaming",
    )
    .addHelpText(
      "after",
      `
A busy agent refuses a prompt: use steer (delivered between turns) or follow-up
(after the run) instead. An extension command ("/name args") is answered when its
handler is done; with --wait one that starts no run returns then (stopReason
"no_run" in --json; exit 1 if it threw), one that sends a message waits for that run.

Examples:
  pi-orch prompt fix-login "now run the tests"
  pi-orch prompt fix-login "summarize your changes" --wait
  pi-orch prompt fix-login "/review src/login.ts" --wait
  pi-orch prompt --to api,web "rebase on main" --wait
  pi-orch prompt --all "commit your work"
  pi-orch prompt --all "commit your work" --json | jq -r '.[] | select(.sent | not) | .agent'`,
    )
    .action((words: string[], opts: { to?: string[]; all?: boolean; wait?: boolean; json?: boolean }) =>
      runAction(ctx, async () => (await actions()).prompt(ctx, words, opts)),
    );

  const queue = (name: string, type: "steer" | "follow_up", what: string, description: string, example: string) =>
    program
      .command(name)
      .argument("<agent>", "agent name or unique id prefix")
      .argument("<text...>", "the message")
      .description(description)
      .addHelpText("after", `\nExample:\n  ${example}`)
      .action((agent: string, words: string[]) =>
        runAction(ctx, async () => (await actions()).queueMessage(ctx, agent, words, type, what)),
      );
  queue(
    "steer",
    "steer",
    "steering message",
    "steer a busy agent: the message is delivered after the current tool calls, before its next turn",
    'pi-orch steer fix-login "use the new API instead"',
  );
  queue(
    "follow-up",
    "follow_up",
    "follow-up",
    "queue a message for when the agent's current run ends",
    'pi-orch follow-up fix-login "then update the changelog"',
  );

  program
    .command("abort")
    .argument("<agent>", "agent name or unique id prefix")
    .description("abort the agent's current run (the model stream and its running tools); the agent stays up")
    .addHelpText("after", "\nExample:\n  pi-orch abort fix-login")
    .action((agent: string) => runAction(ctx, async () => (await actions()).abort(ctx, agent)));
}
