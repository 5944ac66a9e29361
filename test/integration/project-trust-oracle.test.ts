/**
 * pi 1.6's project trust at start-up, on ours and on pi 1.6.0 with the same folders: the
 * `project_trust` event of a user extension (yes, no, undecided, remember), the order
 * against trust.json and `defaultProjectTrust`, and `--no-extensions` leaving the user's
 * extensions out. What shows the decision is the same on both: whether the project's own
 * extension registered its command (`get_commands`).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { killAllWorkers, PI_BIN, RpcWorker, tempDir } from "../support/rpc-worker.js";
import { NODE22, PI16_CLI, pi16Installed } from "../support/upstream-pi16.js";

type Impl = "ours" | "pi 1.6.0";
const IMPLS: Impl[] = ["ours", "pi 1.6.0"];
const BIN: Record<Impl, string[]> = { ours: [process.execPath, PI_BIN], "pi 1.6.0": [NODE22, PI16_CLI] };

const dirs: { cleanup: () => void }[] = [];
afterEach(async () => {
  await killAllWorkers();
  for (const d of dirs.splice(0)) d.cleanup();
});

/** A user extension whose project_trust handler answers `answer` (a JSON value) and says so on stderr. */
function userExtension(home: string, answer: unknown): void {
  mkdirSync(join(home, "extensions"), { recursive: true });
  writeFileSync(
    join(home, "extensions", "trust-answer.ts"),
    `export default function (pi: any) {
  pi.registerCommand("from-user", { description: "user", handler: async () => {} });
  pi.on("project_trust", async (event: any, ctx: any) => {
    ctx.ui.notify(\`project_trust asked for \${event.cwd} in \${ctx.mode}, hasUI \${ctx.hasUI}\`, "info");
    return ${JSON.stringify(answer)};
  });
}
`,
  );
}

/** A project whose .pi/ needs trust: an extension that registers `from-project`. */
function project(): string {
  const dir = tempDir("pi-trust-project-");
  dirs.push(dir);
  mkdirSync(join(dir.path, ".pi", "extensions"), { recursive: true });
  writeFileSync(
    join(dir.path, ".pi", "extensions", "project.ts"),
    'export default function (pi: any) { pi.registerCommand("from-project", { description: "project", handler: async () => {} }); }\n',
  );
  return dir.path;
}

function home(): string {
  const dir = tempDir("pi-trust-home-");
  dirs.push(dir);
  return dir.path;
}

/** Start `impl` in `cwd` with the agent directory `agentDir`; the commands it has, and its stderr. */
async function start(impl: Impl, agentDir: string, cwd: string, args: string[] = []) {
  const worker = new RpcWorker(["--mode", "rpc", "--no-session", ...args], {
    cwd,
    env: {
      PI_CODING_AGENT_DIR: agentDir,
      PI_ORCH_HOME: agentDir,
      PI_OFFLINE: "1",
      HOME: agentDir,
      ANTHROPIC_API_KEY: "",
      OPENAI_API_KEY: "",
    },
    bin: BIN[impl],
  });
  const answer = await worker.request({ type: "get_commands" });
  worker.closeStdin();
  await worker.exited;
  const names = (answer.data.commands as { name: string }[]).map((c) => c.name);
  return {
    user: names.includes("from-user"),
    project: names.includes("from-project"),
    stderr: worker.stderr.join(""),
  };
}

describe.skipIf(!pi16Installed)("project trust at start-up, on ours and on pi 1.6.0", () => {
  it.each(IMPLS)("%s: a user extension's yes trusts the project for this run only", async (impl) => {
    const agentDir = home();
    const cwd = project();
    userExtension(agentDir, { trusted: "yes" });
    const first = await start(impl, agentDir, cwd);
    expect(first).toMatchObject({ user: true, project: true });
    expect(first.stderr).toContain(`project_trust asked for ${cwd} in rpc, hasUI false`);
    // Not remembered: with the handler gone, nothing decides and "ask" cannot ask.
    userExtension(agentDir, { trusted: "undecided" });
    expect(await start(impl, agentDir, cwd)).toMatchObject({ user: true, project: false });
  });

  it.each(IMPLS)("%s: yes with remember is recorded, and holds for the next start", async (impl) => {
    const agentDir = home();
    const cwd = project();
    userExtension(agentDir, { trusted: "yes", remember: true });
    expect(await start(impl, agentDir, cwd)).toMatchObject({ project: true });
    userExtension(agentDir, { trusted: "undecided" });
    expect(await start(impl, agentDir, cwd)).toMatchObject({ project: true });
  });

  it.each(IMPLS)("%s: a handler's no wins over defaultProjectTrust always", async (impl) => {
    const agentDir = home();
    const cwd = project();
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ defaultProjectTrust: "always" }));
    userExtension(agentDir, { trusted: "no" });
    expect(await start(impl, agentDir, cwd)).toMatchObject({ user: true, project: false });
    // Undecided: defaultProjectTrust decides.
    userExtension(agentDir, { trusted: "undecided" });
    expect(await start(impl, agentDir, cwd)).toMatchObject({ user: true, project: true });
  });

  it.each(IMPLS)("%s: --approve decides before any handler is asked", async (impl) => {
    const agentDir = home();
    const cwd = project();
    userExtension(agentDir, { trusted: "no" });
    const run = await start(impl, agentDir, cwd, ["--approve"]);
    expect(run).toMatchObject({ user: true, project: true });
    expect(run.stderr).not.toContain("project_trust asked");
  });

  it.each(IMPLS)("%s: a project with nothing that needs trust asks no handler", async (impl) => {
    const agentDir = home();
    const plain = tempDir("pi-trust-plain-");
    dirs.push(plain);
    userExtension(agentDir, { trusted: "no" });
    const run = await start(impl, agentDir, plain.path);
    expect(run.user).toBe(true);
    expect(run.stderr).not.toContain("project_trust asked");
  });

  it.each(IMPLS)("%s: --no-extensions leaves out the user's extensions (and their project_trust)", async (impl) => {
    const agentDir = home();
    const cwd = project();
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ defaultProjectTrust: "always" }));
    userExtension(agentDir, { trusted: "no" });
    const run = await start(impl, agentDir, cwd, ["--no-extensions"]);
    expect(run).toMatchObject({ user: false, project: false });
    expect(run.stderr).not.toContain("project_trust asked");
  });
});

describe("defaultProjectTrust that is no value pi knows (ours only: pi 1.6.0 says nothing)", () => {
  it("counts as ask and is named on stderr", async () => {
    const agentDir = home();
    const cwd = project();
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ defaultProjectTrust: "sometimes" }));
    const run = await start("ours", agentDir, cwd);
    expect(run.project).toBe(false);
    expect(run.stderr).toContain('defaultProjectTrust "sometimes" is not "ask", "always" or "never"; using "ask"');
  });
});
