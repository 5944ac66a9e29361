/** `pi-orch rpc NAME 'JSON'`: forward one pi protocol command and print the worker's own response. */
import type { Command } from "commander";
import { CliError, runAction, type CliContext } from "../context.js";
import { positiveInt } from "./options.js";

/** Register `rpc`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command("rpc")
    .argument("<agent>", "agent name or unique id prefix")
    .argument("<json>", 'one pi RPC command, e.g. \'{"type":"get_state"}\'')
    .description("send one pi protocol command to an agent's worker and print its response as JSON")
    .option("--timeout <ms>", "give up waiting for the response after this long", positiveInt)
    .option("--json", "print the response as JSON (what rpc always prints; accepted like on every read command)")
    .addHelpText(
      "after",
      `
It must be a JSON object with a "type" (else exit 2). The worker checks the rest
against the pi protocol (docs/rpc.md of pi 1.6): a field of the wrong type or an
unknown command comes back as success:false naming it. Exit 1 when the worker
answers success:false.

Examples:
  pi-orch rpc fix-login '{"type":"get_state"}'
  pi-orch rpc fix-login '{"type":"get_messages"}' | jq '.data.messages | length'
  pi-orch rpc fix-login '{"type":"set_model","provider":"anthropic","modelId":"claude-opus-4-7"}'`,
    )
    .action((agent: string, text: string, opts: { timeout?: number }) =>
      runAction(ctx, async () => {
        let command: unknown;
        try {
          command = JSON.parse(text);
        } catch (err) {
          throw new CliError(
            `the command is not valid JSON (${(err as Error).message}); quote it, e.g. '{"type":"get_state"}'`,
            2,
          );
        }
        const [{ RpcCommandEnvelope }, { checker }] = await Promise.all([
          import("../../shared/schema/rpc.js"),
          import("../../shared/validate.js"),
        ]);
        const envelope = checker(RpcCommandEnvelope)(command);
        if (!envelope.ok) {
          throw new CliError('the command must be a JSON object with a "type", e.g. \'{"type":"get_state"}\'', 2);
        }
        const client = await ctx.client();
        try {
          // As the user wrote it: a command our schemas do not know may reach a worker that does.
          const response = await client.forward(agent, envelope.value, { timeoutMs: opts.timeout });
          ctx.json(response);
          return response.success ? 0 : 1;
        } finally {
          await client.close();
        }
      }),
    );
}
