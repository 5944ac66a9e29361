/** `pi-orch spawn`: start a new agent under the supervisor. */
import { piOrchCommand } from "../../shared/cli-hint.js";
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { Option, type Command } from "commander";
import type { IpcClient } from "../../ipc/client.js";
import type { IpcParams } from "../../shared/schema/ipc.js";
import type { RestartKind, StallAction } from "../../shared/schema/agent.js";
import { agentLogPaths, logsDir } from "../../shared/paths.js";
import { splitCommandLine } from "../../supervisor/worker-command.js";
import { CliError, runAction, type CliContext } from "../context.js";
import { keyAdvice } from "../key-advice.js";
import { colorStatus } from "./format.js";
import { collect, positiveInt, sandboxOption, SANDBOX_HELP, secondsToMs } from "./options.js";
import type { SandboxMode } from "../../shared/sandbox.js";

/** The key variables of the built-in providers, for the advice on a missing one. */
const KEY_VARS: Readonly<Record<string, string>> = { anthropic: "ANTHROPIC_API_KEY", openai: "OPENAI_API_KEY" };

/**
 * A warning when the new agent's model has no API key where its worker runs (it is not
 * among the models `get_available_models` lists), so its first prompt would be refused:
 * said at spawn, not only when the ten agents are prompted. Null when the model has a
 * key, or the worker cannot say (a worker without that command).
 */
async function missingKeyWarning(client: IpcClient, agent: string, home: string): Promise<string | null> {
  const [state, available] = await Promise.all([
    client.rpc(agent, { type: "get_state" }),
    client.rpc(agent, { type: "get_available_models" }),
  ]).catch(() => [null, null]);
  if (!state?.success || !available?.success) return null;
  const provider = state.data.model?.provider;
  const models = available.data.models;
  if (provider === undefined) return null;
  if (models.some((m) => m.provider === provider)) return null;
  const env = KEY_VARS[provider];
  const said = `no API key for provider "${provider}": ${env ? `set ${env}, ` : ""}pass --api-key, or set providers.${provider}.apiKey in models.json`;
  return `pi-orch: warning: agent "${agent}" will refuse prompts: ${keyAdvice(said, "daemon", home)}`;
}

interface SpawnFlags {
  name?: string;
  cwd?: string;
  provider?: string;
  model?: string;
  prompt?: string;
  restart?: RestartKind;
  workerCommand?: string;
  onStall?: StallAction;
  maxMemory?: number;
  maxTokens?: number;
  runTimeout?: number;
  json?: boolean;
  worktree?: boolean;
  branch?: string;
  base?: string;
  sandbox?: SandboxMode;
  sandboxWrite?: string[];
  apiKey?: string;
  package?: string[];
  approve?: boolean;
}

/** Register `spawn`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command("spawn")
    .description("start a new agent (a worker process speaking the pi protocol) and wait until it is ready")
    .option("--name <name>", "agent name (default: a generated two-word name)")
    .option("--cwd <dir>", "working directory of the agent (default: this one)")
    .option("--provider <name>", "model provider: anthropic, openai, faux, or one from models.json")
    .option("--model <id>", "model id, or provider/id")
    .option("--prompt <text>", "a first prompt, sent once the agent is ready")
    .addOption(
      new Option("--restart <policy>", "restart policy")
        .choices(["permanent", "transient", "temporary"])
        .default("transient"),
    )
    .option(
      "--worker-command <cmd>",
      'run this pi-compatible program instead of the built-in worker, e.g. "pi --mode rpc"',
    )
    .addOption(
      new Option("--on-stall <action>", "when a busy agent emits nothing for the stall timeout")
        .choices(["notify", "abort", "restart"])
        .default("notify"),
    )
    .option("--max-memory <MB>", "restart the worker when its process tree uses more RSS than this", positiveInt)
    .option("--max-tokens <n>", "abort a run that uses more tokens than this", positiveInt)
    .option("--run-timeout <seconds>", "abort a run that takes longer than this", secondsToMs)
    .option("--worktree", "give the agent its own git worktree of the repository around --cwd, on a new branch")
    .option("--branch <name>", "with --worktree: the branch to create (default pi-orch/<name>)")
    .option("--base <ref>", "with --worktree: the commit the branch starts from (default HEAD)")
    .addOption(sandboxOption())
    .option(
      "--sandbox-write <dir>",
      "with the sandbox: one more folder the agent may write to (repeatable)",
      collect,
      [],
    )
    .option(
      "--api-key <key>",
      "the provider key for this agent (kept in $PI_ORCH_HOME/keys.json, 0600; never in agents.json or the worker's argv)",
    )
    .option(
      "--package <source>",
      "a pi package the agent loads, in every worker it starts (npm:NAME, git:HOST/OWNER/REPO, a folder; repeatable)",
      collect,
    )
    .option(
      "--approve",
      "trust the project's .pi/ files (extensions, skills, settings, SYSTEM.md) for this agent: passes pi's --approve to every start of its worker; nothing is recorded",
    )
    .option("--json", "print the new agent as JSON")
    .addHelpText(
      "after",
      `
Restart policies: permanent (always restart), transient (after a crash; the default),
temporary (never). Restarts back off from 500 ms doubling to 30 s; more than 5 in 60 s
and the agent is failed. A restarted agent resumes its session.

${SANDBOX_HELP}

Examples:
  pi-orch spawn --name fix-login --prompt "fix the login test"
  pi-orch spawn --name demo --provider faux --prompt "list the files"
  pi-orch spawn --name up --worker-command "pi --mode rpc --no-session" --model anthropic/claude-opus-4-7
  pi-orch spawn --name guarded --max-memory 800 --run-timeout 600 --on-stall abort
  pi-orch spawn --name fix-a --worktree --base main --prompt "fix the login test"   then: pi-orch diff fix-a
  pi-orch spawn --name offline --sandbox strict --prompt "run the tests"
  pi-orch spawn --name local --approve --prompt "run /deploy-check"   loads the project's .pi/ extensions`,
    )
    .action((flags: SpawnFlags) =>
      runAction(ctx, async () => {
        if (!flags.worktree && (flags.branch !== undefined || flags.base !== undefined)) {
          throw new CliError("--branch and --base go with --worktree", 2);
        }
        let workerCommand: string[] | undefined;
        if (flags.workerCommand !== undefined) {
          try {
            workerCommand = splitCommandLine(flags.workerCommand);
          } catch (err) {
            throw new CliError(`--worker-command: ${(err as Error).message}`, 2);
          }
          if (workerCommand.length === 0)
            throw new CliError('--worker-command is empty; pass a program, e.g. --worker-command "pi --mode rpc"', 2);
        }
        const limits = {
          ...(flags.maxMemory !== undefined ? { maxMemoryMb: flags.maxMemory } : {}),
          ...(flags.maxTokens !== undefined ? { maxTokens: flags.maxTokens } : {}),
          ...(flags.runTimeout !== undefined ? { runTimeoutMs: flags.runTimeout } : {}),
        };
        // Installed here once, where the workers look, so restarts and a fleet share one copy.
        const packages = flags.package?.length
          ? await (await import("../fleet-packages.js")).prepareFleetPackages(flags.package, {
              home: ctx.home(),
              cwd: flags.cwd ? resolve(flags.cwd) : process.cwd(),
              log: (l) => ctx.err(l),
            })
          : undefined;
        const request: IpcParams<"spawn"> = {
          name: flags.name,
          cwd: flags.cwd ? resolve(flags.cwd) : process.cwd(),
          provider: flags.provider,
          model: flags.model,
          restart: flags.restart,
          workerCommand,
          ...(packages ? { packages } : {}),
          onStall: flags.onStall,
          limits,
          prompt: flags.prompt,
          worktree: flags.worktree ? { branch: flags.branch, base: flags.base } : undefined,
          sandbox: flags.sandbox,
          sandboxWrite: flags.sandboxWrite?.length ? flags.sandboxWrite.map((d) => resolve(d)) : undefined,
          // The supervisor takes it out of the command line into keys.json, and the worker gets it on its private pipe.
          ...(flags.apiKey !== undefined || flags.approve
            ? {
                extraArgs: [
                  ...(flags.apiKey !== undefined ? ["--api-key", flags.apiKey] : []),
                  ...(flags.approve ? ["--approve"] : []),
                ],
              }
            : {}),
        };
        const client = await ctx.client();
        try {
          const info = await client.spawn(request).catch((err: Error) => {
            err.message = keyAdvice(err.message, "daemon", ctx.home());
            throw err;
          });
          const started = info.status !== "failed" && info.status !== "stopped" && info.status !== "backoff";
          if (flags.json) ctx.json(info);
          else if (!started) {
            const stderrLog = agentLogPaths(logsDir(ctx.home()), info.name).stderr;
            const more =
              existsSync(stderrLog) && statSync(stderrLog).size > 0
                ? `; its stderr: ${piOrchCommand(`logs ${info.name} --stderr`, ctx.homeFlag())}`
                : "";
            ctx.err(
              `pi-orch: agent "${info.name}" did not start (${info.status}${info.statusReason ? `: ${info.statusReason}` : ""}); ` +
                (info.status === "failed"
                  ? `remove it with ${piOrchCommand(`rm ${info.name}`, ctx.homeFlag())} and spawn it again with that fixed`
                  : `see ${piOrchCommand(`status ${info.name}`, ctx.homeFlag())}`) +
                more,
            );
          } else {
            ctx.out(
              `spawned ${ctx.color.bold(info.name)} (id ${info.id}, pid ${info.pid ?? "-"}, ${colorStatus(info.status, ctx.color)}${info.sandbox && info.sandbox !== "off" ? `, sandbox ${info.sandbox}` : ", no sandbox"})` +
                (flags.prompt !== undefined ? "; prompt sent" : ""),
            );
            ctx.out(ctx.color.dim(`  follow it: ${piOrchCommand(`attach ${info.name}`, ctx.homeFlag())}`));
            if (flags.prompt === undefined) {
              const missing = await missingKeyWarning(client, info.name, ctx.home());
              if (missing) ctx.err(missing);
            }
          }
          return started ? 0 : 1;
        } finally {
          await client.close();
        }
      }),
    );
}
