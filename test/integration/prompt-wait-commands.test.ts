/**
 * `pi-orch prompt NAME "/cmd" --wait` end to end: a real `serve`, a real worker (the faux
 * `pi`) loading extension commands, the CLI as a child process. A command that starts no
 * run returns at its answer (it waited for an agent_end that never came); one that calls
 * `pi.sendUserMessage`, a prompt template and a confirmed dialog still wait for the run
 * and print its reply. afterEach kills every process the test started.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { existsSync } from "node:fs";
import { startMockModelServer, type MockModelServer } from "../support/mock-model-server.js";
import { BIN, PI, World, type Json } from "../support/orch-cli.js";
import { tempDir } from "../support/rpc-worker.js";
import { mockModelsJson, UPSTREAM_CLI, upstreamInstalled } from "../support/upstream-oracle.js";

let world: World;
let server: MockModelServer | undefined;
let agentDir: { path: string; cleanup: () => void } | undefined;

beforeAll(() => {
  if (!existsSync(BIN) || !existsSync(PI))
    throw new Error("dist/cli/pi-orch.js or dist/cli/pi.js is missing: run npm run build first");
});

afterEach(async () => {
  try {
    await world?.cleanup();
  } finally {
    try {
      await server?.close();
    } finally {
      agentDir?.cleanup();
      server = agentDir = undefined;
    }
  }
});

const COMMANDS = `
export default function (pi) {
  pi.registerCommand("noop", { description: "does nothing", handler: async () => {} });
  pi.registerCommand("boom", { description: "throws", handler: async () => { throw new Error("the command broke"); } });
  pi.registerCommand("send", { description: "sends a message", handler: async () => pi.sendUserMessage("hello from send") });
  pi.registerCommand("ask", {
    description: "asks first",
    handler: async (_args, ctx) => {
      if (await ctx.ui.confirm("Send it?", "The command sends a message when confirmed")) pi.sendUserMessage("confirmed");
    },
  });
}
`;

/** The faux worker's command replying `replies` in order, with the commands; the home gets a `greet` template. */
function workerCommand(replies: Json[]): string {
  const ext = join(world.cwd.path, "commands.ts");
  writeFileSync(ext, COMMANDS);
  mkdirSync(join(world.home.path, "prompts"), { recursive: true });
  writeFileSync(join(world.home.path, "prompts", "greet.md"), "---\ndescription: Greets\n---\nSay hello to $1");
  return `${world.fauxWorker(replies)} -e ${ext}`;
}

/** A served world with agent `cmds` on that worker. */
async function setup(replies: Json[]): Promise<void> {
  world = new World();
  const command = workerCommand(replies);
  await world.serve();
  await world.ok(["spawn", "--name", "cmds", "--worker-command", command]);
}

/** The user messages of the agent's runs, from its event log. */
function userTexts(): string[] {
  return world
    .events("cmds")
    .filter((e) => e.event?.type === "message_end" && e.event.message.role === "user")
    .map((e) => (e.event.message.content as Json[]).map((c) => c.text).join(""));
}

describe("pi-orch prompt --wait with slash commands", () => {
  it("a command that starts no run returns at its answer: exit 0, or 1 when it threw; --json says no_run", async () => {
    await setup([{ text: "only reply" }]);
    const noop = await world.cli(["prompt", "cmds", "/noop", "--wait"]);
    expect(noop).toMatchObject({ code: 0, stdout: "" });
    expect(noop.stderr).toBe(
      "pi-orch: cmds took the prompt without starting a run (an extension command or input handler handled it)\n",
    );

    const json = await world.cli(["prompt", "cmds", "/noop", "--wait", "--json"]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([{ agent: "cmds", ok: true, stopReason: "no_run", text: "" }]);
    expect(json.stderr).toBe("");

    const boom = await world.cli(["prompt", "cmds", "/boom", "--wait"]);
    expect(boom.code).toBe(1);
    expect(boom.stderr).toContain('agent "cmds": the command failed: the command broke');

    // Nothing ran: the agent is idle and the model was never asked.
    expect((await world.json(["status", "cmds"])).status).toBe("idle");
    expect(userTexts()).toEqual([]);
  }, 60_000);

  it("a command that sends a message and a prompt template wait for their run and print the reply", async () => {
    await setup([{ text: "reply to the command" }, { text: "reply to the template" }]);
    const send = await world.cli(["prompt", "cmds", "/send", "--wait"]);
    expect(send).toMatchObject({ code: 0, stderr: "" });
    expect(send.stdout).toContain("reply to the command");

    const greet = await world.cli(["prompt", "cmds", "/greet world", "--wait", "--json"]);
    expect(greet.code).toBe(0);
    expect(JSON.parse(greet.stdout)).toEqual([
      { agent: "cmds", ok: true, stopReason: "stop", text: "reply to the template" },
    ]);
    expect(userTexts()).toEqual(["hello from send", "Say hello to world"]);
    expect((await world.json(["status", "cmds"])).status).toBe("idle");
  }, 60_000);

  it("a command's dialog answered by the test: confirmed it waits for the run it starts, declined it returns with no run", async () => {
    await setup([{ text: "reply after the dialog" }]);
    for (const confirmed of [true, false]) {
      const prompt = world.start(["prompt", "cmds", "/ask", "--wait"]);
      // The CLI says who asks and how to answer; the test answers the way it says.
      const hint = await world.until("the dialog hint", prompt.stderr, (t) =>
        /pi-orch rpc cmds '\{"type":"extension_ui_response"[^']*\}'/.test(t),
      );
      const reply = JSON.parse(/pi-orch rpc cmds '(\{"type":"extension_ui_response"[^']*\})'/.exec(hint)![1]!) as Json;
      expect(reply).toMatchObject({ confirmed: true });
      await world.ok(["rpc", "cmds", JSON.stringify({ ...reply, confirmed })]);
      expect(await prompt.exited).toBe(0);
      if (confirmed) {
        expect(prompt.stdout()).toContain("reply after the dialog");
      } else {
        expect(prompt.stdout()).toBe("");
        expect(prompt.stderr()).toContain("cmds took the prompt without starting a run");
      }
    }
    expect(userTexts()).toEqual(["confirmed"]);
  }, 60_000);

  it("pi-orch run: a task that is a command starting no run passes at its answer (fails when it threw); one that sends a message passes with the run's reply", async () => {
    world = new World();
    const tasks = join(world.cwd.path, "tasks.json");
    writeFileSync(
      tasks,
      JSON.stringify([
        { name: "noop", prompt: "/noop" },
        { name: "send", prompt: "/send" },
        { name: "boom", prompt: "/boom" },
      ]),
    );
    const r = await world.cli(
      ["run", tasks, "--concurrency", "1", "--worker-command", workerCommand([{ text: "the task's reply" }]), "--json"],
      60_000,
    );
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as { tasks: Json[] };
    const byName = Object.fromEntries(report.tasks.map((t) => [t.name, t]));
    expect(byName.noop).toMatchObject({ status: "passed", turns: 0, finalText: "" });
    expect(byName.send).toMatchObject({ status: "passed", finalText: "the task's reply" });
    expect(byName.boom).toMatchObject({ status: "failed", reason: "the command failed: the command broke" });
  }, 90_000);

  it.skipIf(!upstreamInstalled)(
    "with upstream pi 0.73.1 as the worker, whose answer does not say: a template still returns with its reply, and a command says it waits for a run's end",
    async () => {
      server = await startMockModelServer();
      agentDir = tempDir("pi-upstream-agent-");
      writeFileSync(join(agentDir.path, "models.json"), JSON.stringify(mockModelsJson(server)));
      mkdirSync(join(agentDir.path, "prompts"), { recursive: true });
      writeFileSync(join(agentDir.path, "prompts", "greet.md"), "---\ndescription: Greets\n---\nSay hello to $1");
      world = new World({ PI_CODING_AGENT_DIR: agentDir.path, PI_OFFLINE: "1" });
      const ext = join(world.cwd.path, "commands.ts");
      writeFileSync(ext, COMMANDS);
      await world.serve();
      await world.ok([
        "spawn",
        "--name",
        "up",
        "--worker-command",
        `${process.execPath} ${UPSTREAM_CLI} --mode rpc --no-session -e ${ext}`,
        "--provider",
        "mock",
        "--model",
        "mock-1",
      ]);

      server.enqueue({ text: "upstream's reply" });
      const greet = await world.cli(["prompt", "up", "/greet world", "--wait"]);
      expect(greet.code).toBe(0);
      expect(greet.stdout).toContain("upstream's reply");
      expect(greet.stderr).toContain(`up's worker does not say whether "/greet world" started a run`);

      // /noop starts none: nothing would end the wait, and the CLI says so instead of seeming to hang.
      const noop = world.start(["prompt", "up", "/noop", "--wait"]);
      await world.until("the note", noop.stderr, (t) =>
        t.includes(`up's worker does not say whether "/noop" started a run`),
      );
      expect(noop.proc.exitCode).toBe(null);
      noop.proc.kill("SIGINT");
      await noop.exited;
    },
    90_000,
  );
});
