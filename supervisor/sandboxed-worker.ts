/**
 * A fleet worker's command inside its sandbox (shared/sandbox.ts). The supervisor's home
 * is hidden: agents.json, the socket, the logs and the other agents' worktrees and
 * sessions are not there. What shows again: the agent-directory files the worker reads
 * (read-only), the agent's own session folder and worktree (read-write), and under `on`
 * the tool caches.
 */
import { mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { defaultSessionDir, piOrchHome } from "../shared/paths.js";
import {
  AGENT_DIR_ENTRIES,
  bwrapArgs,
  programFolders,
  SANDBOXED_VAR,
  type SandboxPlan,
  toolCaches,
} from "../shared/sandbox.js";
import type { AgentRecord } from "../shared/schema/agent.js";
import { keylessFiles } from "./keyless-files.js";

/** What to execute. */
export interface WorkerCommand {
  file: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string | undefined>;
}

/**
 * The plan of `record`'s sandbox under the supervisor home `home`; creates the agent's own
 * session folder (`sessionDir`, for its worker's `--session-dir`), and keyless copies of the agent directory's models.json and auth.json
 * (supervisor/keyless-files.ts) under `home/sandbox/ID`, shown in place of the originals.
 * `secrets` are the keys taken out: the worker gets them on its private pipe.
 */
export function fleetSandboxPlan(
  record: AgentRecord,
  home: string,
  cwd: string,
  ownWorker: boolean,
): { plan: SandboxPlan; secrets: Record<string, string>; sessionDir: string } {
  const mode = record.sandbox === "strict" ? "strict" : "on";
  // The worker's agent directory: the supervisor's home, or the one its env names (`run`
  // keeps its supervisor in a temp folder and the sessions in the user's home).
  const agentDir = record.env?.PI_ORCH_HOME ? resolve(record.env.PI_ORCH_HOME) : home;
  // A folder of its own inside the project's session folder: that one holds the sessions
  // of every agent (and of your own pi) in the same project, which it must not read.
  const sessionDir = join(defaultSessionDir(cwd, agentDir), record.id);
  mkdirSync(sessionDir, { recursive: true, mode: 0o700 });
  const writable = [sessionDir, ...(record.sandboxWrite ?? [])];
  if (record.sessionFile) writable.push(dirname(record.sessionFile));
  if (record.worktree) writable.push(record.worktree.path);
  if (mode === "on") writable.push(...toolCaches());
  const keyless = keylessFiles(agentDir, join(home, "sandbox", record.id), ownWorker);
  const plan: SandboxPlan = {
    mode,
    cwd,
    writable,
    // The user's own pi-orch home too, when this supervisor runs another (a test's, a `--home`).
    hidden: [home, agentDir, piOrchHome({})],
    reveal: AGENT_DIR_ENTRIES.map((entry) => join(agentDir, entry)),
    replaced: keyless.replaced,
  };
  return { plan, secrets: keyless.secrets, sessionDir };
}

/** `cmd` run by `bwrap` under `plan`, with the mode in the environment so the worker does not wrap itself again. */
export function sandboxedCommand(cmd: WorkerCommand, plan: SandboxPlan, bwrap: string): WorkerCommand {
  const program = programFolders([cmd.file, ...cmd.args]);
  // The worker's startup snapshot, which node reads before anything else, wherever its cache folder is.
  const blob = cmd.args.indexOf("--snapshot-blob");
  if (blob >= 0 && cmd.args[blob + 1] !== undefined) program.push(cmd.args[blob + 1]!);
  return {
    file: bwrap,
    args: [...bwrapArgs({ ...plan, reveal: [...plan.reveal, ...program] }), cmd.file, ...cmd.args],
    cwd: cmd.cwd,
    env: { ...cmd.env, [SANDBOXED_VAR]: plan.mode },
  };
}
