/**
 * What `pi-orch demo` does (its flags and help are in demo.ts): make a temporary git
 * repository with a small project, start its own supervisor and four `faux` agents in
 * worktrees of it, show them in the TUI or a live summary, and remove it all at the end.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { logsDir, supervisorLogPath } from "../../shared/paths.js";
import { execa } from "execa";
import { IpcClient, IpcClientError } from "../../ipc/client.js";
import type { IpcStreamMessage } from "../../shared/schema/ipc.js";
import type { AgentInfo } from "../../shared/schema/agent.js";
import { diffWorktree } from "../../supervisor/worktrees.js";
import { CliError, colorEnabled, lastLogLine, type CliContext } from "../context.js";
import { colorStatus, renderTable } from "./format.js";
import { TranscriptRenderer } from "./transcript.js";
import { EMPTY_RUN_VIEW, foldRun, type RunEvent, type RunView } from "../events/run-view.js";
import { openLogNoFollow } from "../../shared/safe-open.js";
import { nodeFlagsHint, nodeFlagsProblem, supervisorNodeFlags } from "../serve/node-flags.js";

/** The flags of `pi-orch demo`, as commander parsed them. */
export interface DemoFlags {
  tui: boolean;
  keep?: boolean;
}

/** The four agents and their tasks, in the faux model's words. */
const AGENTS = [
  { name: "lister", prompt: "list the files" },
  { name: "reader", prompt: "read src/greet.js" },
  { name: "editor", prompt: 'replace "Hello" with "Howdy" in src/greet.js' },
  { name: "runner", prompt: "run `node src/greet.test.js`" },
] as const;

const PROJECT: Record<string, string> = {
  "README.md": "# greet\n\nA tiny project for the pi-orch demo: one function and its test.\n",
  "package.json": `${JSON.stringify(
    { name: "greet", private: true, type: "module", scripts: { test: "node src/greet.test.js" } },
    null,
    2,
  )}\n`,
  "src/greet.js": 'export function greet(name) {\n  return "Hello, " + name + "!";\n}\n',
  "src/greet.test.js":
    'import { greet } from "./greet.js";\n\nconst got = greet("pi");\nif (!got.endsWith(", pi!")) {\n  console.error("unexpected greeting: " + got);\n  process.exit(1);\n}\nconsole.log("ok: " + got);\n',
};

/** How long `--no-tui` waits for the agents before giving up. */
const SETTLE_TIMEOUT_MS = 60_000;

/** Run the demo; 0 when every agent settled (or the TUI was quit). */
export async function runDemo(ctx: CliContext, flags: DemoFlags): Promise<number> {
  const tui = flags.tui && Boolean(process.stdin.isTTY && process.stdout.isTTY);
  const problem = nodeFlagsProblem(process.env);
  if (problem) throw new CliError(problem);
  if (flags.tui && !tui)
    ctx.err("pi-orch demo: no terminal here, so no TUI: printing a live summary instead (--no-tui)");
  const root = mkdtempSync(join(tmpdir(), "pi-orch-demo-"));
  const repo = join(root, "repo");
  const home = join(root, "home");
  const world = new DemoWorld(root, flags.keep === true);
  const onSignal = (signal: NodeJS.Signals) => {
    void world.cleanup().finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
  };
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
  for (const s of signals) process.on(s, onSignal);
  try {
    await createProject(repo);
    const client = await world.startSupervisor(ctx.selfBin, home, tui ? 40 : 20);
    const spawnAll = () =>
      Promise.all(
        AGENTS.map((a) =>
          client.spawn({
            name: a.name,
            cwd: repo,
            provider: "faux",
            worktree: {},
            prompt: a.prompt,
            restart: "temporary",
          }),
        ),
      );
    if (tui) {
      // React's development build is several times slower; it is chosen when react is first loaded.
      process.env.NODE_ENV ??= "production";
      const { runTui } = await import("../tui/run.js");
      const spawned = spawnAll().catch((err: unknown) => err as Error);
      await runTui({
        connect: (attempt) => (attempt === 0 ? Promise.resolve(client) : IpcClient.connect({ home })),
        color: colorEnabled(),
        defaultCwd: repo,
        spawnDefaults: { provider: "faux" },
        title: "pi-orch demo",
        quitNote: "the demo stops its agents and removes its folder",
      });
      const result = await spawned;
      if (result instanceof Error) throw new CliError(`the demo could not start its agents: ${result.message}`);
      return 0;
    }
    return await liveSummary(ctx, client, spawnAll, repo, root, flags.keep === true);
  } finally {
    await world.cleanup();
    for (const s of signals) process.off(s, onSignal);
  }
}

/** The demo repository: the project files, committed on `main`. */
async function createProject(repo: string): Promise<void> {
  for (const [path, text] of Object.entries(PROJECT)) {
    mkdirSync(join(repo, path, ".."), { recursive: true });
    writeFileSync(join(repo, path), text);
  }
  const git = (args: string[]) => execa("git", args, { cwd: repo });
  try {
    await git(["init", "-q", "-b", "main"]);
    await git(["add", "-A"]);
    await git([
      "-c",
      "user.name=pi-orch demo",
      "-c",
      "user.email=demo@pi-orch.invalid",
      "commit",
      "-q",
      "-m",
      "the greet project",
    ]);
  } catch (err) {
    throw new CliError(`the demo needs git to create its repository: ${(err as Error).message.split("\n")[0]}`);
  }
}

/** `--no-tui`: every event as a prefixed transcript line, then a table once all agents settled. */
async function liveSummary(
  ctx: CliContext,
  client: IpcClient,
  spawnAll: () => Promise<AgentInfo[]>,
  repo: string,
  root: string,
  keep: boolean,
): Promise<number> {
  const c = ctx.color;
  ctx.out(c.bold(`pi-orch demo: 4 faux agents in worktrees of ${repo}`));
  const renderer = new TranscriptRenderer({ write: (t) => ctx.write(t), colors: c, prefixAgents: true });
  const settled = new Map<string, string>();
  const views = new Map<string, RunView>();
  let finished = false;
  let allSettled!: () => void;
  const done = new Promise<void>((r) => (allSettled = r));
  await client.subscribe({}, (m: IpcStreamMessage) => {
    if (finished) return; // the teardown's own status changes are not part of the story
    renderer.feed(m);
    if (m.type !== "event") return;
    const before = views.get(m.agent) ?? EMPTY_RUN_VIEW;
    const view = foldRun(before, m.event as RunEvent);
    views.set(m.agent, view);
    const ending = view.ending;
    if (ending !== null && ending !== before.ending) {
      if (ending.kind === "ended") settled.set(m.agent, "done");
      if (ending.kind === "status" && (ending.status === "failed" || ending.status === "stopped"))
        settled.set(m.agent, ending.status);
    }
    if (AGENTS.every((a) => settled.has(a.name))) allSettled();
  });
  await spawnAll();
  const timer = setTimeout(allSettled, SETTLE_TIMEOUT_MS);
  await done;
  finished = true;
  clearTimeout(timer);
  renderer.end();
  const infos = await client.list();
  await client.close();
  const rows = AGENTS.map((a) => {
    const info = infos.find((i) => i.name === a.name);
    return [
      a.name,
      info ? colorStatus(info.status, c) : "-",
      a.prompt,
      String(views.get(a.name)?.toolCalls ?? 0),
      String(views.get(a.name)?.tokens.total ?? 0),
      info?.worktree?.branch ?? "-",
    ];
  });
  ctx.out("");
  ctx.out(renderTable(["AGENT", "STATUS", "TASK", "TOOLS", "TOKENS", "BRANCH"], rows, c));
  const editor = infos.find((i) => i.name === "editor");
  if (editor?.worktree) {
    ctx.out("");
    ctx.out(c.bold("the editor's worktree, against main:"));
    ctx.out((await diffWorktree(editor.worktree)).trimEnd());
  }
  const unsettled = AGENTS.filter((a) => settled.get(a.name) !== "done").map((a) => a.name);
  ctx.out("");
  if (unsettled.length > 0) {
    ctx.err(
      `pi-orch demo: ${unsettled.join(", ")} did not finish within ${SETTLE_TIMEOUT_MS / 1000}s; see the transcript above`,
    );
    return 1;
  }
  const me = invokedAs(process.env);
  ctx.out(
    c.dim(
      `all 4 agents settled; ${keep ? "stopping them" : `removing ${root}`}. Next: ${me} demo (the TUI), or ${me} spawn --provider faux --prompt "list the files"`,
    ),
  );
  return 0;
}

/**
 * How the user typed this program, for the next commands we suggest: `npx pi-orch` under
 * npx / `npm exec` (the README's quickstart, in a checkout where `pi-orch` is not on the
 * PATH), else `pi-orch`. Pure.
 */
export function invokedAs(env: NodeJS.ProcessEnv): string {
  return env.npm_command === "exec" ? "npx pi-orch" : "pi-orch";
}

/** What the demo started and made, and how to undo it (idempotent). */
class DemoWorld {
  private serve: ChildProcess | null = null;
  private home: string | null = null;
  private cleaning: Promise<void> | null = null;

  constructor(
    private readonly root: string,
    private readonly keep: boolean,
  ) {}

  /** Start a supervisor of its own (in its own process group) and connect to it. */
  async startSupervisor(selfBin: string, home: string, chunkMs: number): Promise<IpcClient> {
    this.home = home;
    mkdirSync(logsDir(home), { recursive: true, mode: 0o700 });
    const logPath = supervisorLogPath(home);
    const log = openLogNoFollow(logPath);
    this.serve = spawn(process.execPath, [...supervisorNodeFlags(), selfBin, "--home", home, "serve"], {
      detached: true,
      stdio: ["ignore", log, log],
      env: {
        ...process.env,
        PI_ORCH_FAUX_CHUNK_MS: String(chunkMs),
        PI_ORCH_TIMINGS: JSON.stringify({ stopGraceMs: 1000, killGraceMs: 500 }),
        ANTHROPIC_API_KEY: "",
        OPENAI_API_KEY: "",
      },
    });
    // The child holds its own copy of the log descriptor.
    closeSync(log);
    const exited = new Promise<void>((r) => this.serve!.once("exit", () => r()));
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        return await IpcClient.connect({ home });
      } catch (err) {
        const gone = await Promise.race([
          exited.then(() => true),
          new Promise<boolean>((r) => setTimeout(() => r(false), 50)),
        ]);
        if (!(err instanceof IpcClientError) || gone || Date.now() > deadline) {
          // Read now: the cleanup that follows removes the log with the demo's folder (unless --keep).
          const said = lastLogLine(logPath, 0);
          const where = this.keep ? ` (log: ${logPath})` : " (its log goes with the demo's folder; --keep keeps it)";
          throw new CliError(
            `the demo's supervisor did not start${said ? `: ${said.replace(/^pi-orch( serve)?: /, "")}` : ""}${where}${gone ? nodeFlagsHint(process.env) : ""}`,
          );
        }
      }
    }
  }

  /** Stop the agents and the supervisor, then remove the folder (unless `--keep`). */
  cleanup(): Promise<void> {
    this.cleaning ??= this.doCleanup();
    return this.cleaning;
  }

  private async doCleanup(): Promise<void> {
    const serve = this.serve;
    if (serve && serve.exitCode === null && serve.signalCode === null) {
      const exited = new Promise<void>((r) => serve.once("exit", () => r()));
      try {
        const client = await IpcClient.connect({ home: this.home! });
        await Promise.race([client.shutdown(), exited]).catch(() => undefined);
        await client.close();
      } catch {
        // Already gone, or not answering: the kill below ends it.
      }
      const timer = setTimeout(() => {
        try {
          process.kill(-serve.pid!, "SIGKILL");
        } catch {
          // exited meanwhile
        }
      }, 10_000);
      await exited;
      clearTimeout(timer);
    }
    if (this.keep) {
      process.stderr.write(
        `pi-orch demo: kept ${this.root} (the repository in repo/, the home in home/); remove it with rm -rf ${this.root}\n`,
      );
      return;
    }
    rmSync(this.root, { recursive: true, force: true });
  }
}
