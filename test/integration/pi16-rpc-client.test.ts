/**
 * Interop: pi 1.6.0's own `RpcClient` (imported from the installed 1.6.0 package, so it
 * runs on the Node 22 of test/upstream) drives our worker, `node dist/cli/pi.js --mode
 * rpc` on this machine's Node, through every step a client of pi 1.6 takes: start,
 * getState, prompt and waitForIdle, promptAndWait, steer, followUp, clearQueue, abort,
 * getEntries, getTree, bash, stop. A small driver script runs the client and prints each
 * step's result as one JSON line; the test reads them.
 */
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { NODE22, PI16_PACKAGE, pi16Installed } from "../support/upstream-pi16.js";
import { PI_BIN, tempDir } from "../support/rpc-worker.js";

const dirs: { cleanup: () => void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.cleanup();
});

/** The driver: each step's outcome as `{step, ok, value}` or `{step, ok: false, error}`, one line each. */
const DRIVER = (clientUrl: string) => `
import { RpcClient } from ${JSON.stringify(clientUrl)};
const [cliPath, cwd, script] = process.argv.slice(2);
const client = new RpcClient({ cliPath, cwd, provider: "faux", model: "faux-1", args: ["--no-session", "--faux-script", script] });
const events = [];
client.onEvent((e) => events.push(e));
const step = async (name, run) => {
  try {
    const value = await run();
    console.log(JSON.stringify({ step: name, ok: true, value: value ?? null }));
  } catch (err) {
    console.log(JSON.stringify({ step: name, ok: false, error: String(err?.message ?? err).slice(0, 500) }));
  }
};
const until = (type) => new Promise((resolve) => {
  const off = client.onEvent((e) => { if (e.type === type) { off(); resolve(e); } });
});
await step("start", () => client.start());
await step("getState", async () => { const s = await client.getState(); return { isStreaming: s.isStreaming, model: s.model?.id, thinkingLevel: s.thinkingLevel }; });
await step("prompt", async () => {
  const idle = client.waitForIdle(20000);
  const disposition = await client.prompt("say hello");
  await idle;
  return { disposition };
});
await step("waitForIdle", async () => {
  const idle = client.waitForIdle(20000);
  await client.prompt("again");
  await idle;
  return { settled: events.filter((e) => e.type === "agent_settled").length };
});
await step("promptAndWait", async () => {
  const got = await client.promptAndWait("and once more", undefined, 20000);
  return { types: [...new Set(got.map((e) => e.type))], text: got.filter((e) => e.type === "message_update" && e.assistantMessageEvent.type === "text_delta").map((e) => e.assistantMessageEvent.delta).join("") };
});
const streaming = until("message_update");
const settled = until("agent_settled");
await step("prompt (slow)", async () => ({ disposition: await client.prompt("count slowly") }));
await streaming;
await step("steer", async () => ({ disposition: await client.steer("steer this") }));
await step("followUp", async () => ({ disposition: await client.followUp("then this") }));
await step("clearQueue", () => client.clearQueue());
await step("abort", async () => { await client.abort(); const s = await settled; return { aborted: s.aborted }; });
await step("getEntries", async () => { const r = await client.getEntries(); return { count: r.entries.length, types: r.entries.map((e) => e.type), leafId: r.leafId, last: r.entries.at(-1)?.id }; });
await step("getTree", async () => { const r = await client.getTree(); return { roots: r.tree.length, leafId: r.leafId }; });
const updates = [];
const offBash = client.onEvent((e) => { if (e.type === "bash_execution_update") updates.push(e.delta); });
await step("bash", async () => { const r = await client.bash("echo from bash"); offBash(); return { ...r, streamed: updates.join("") }; });
await step("stop", () => client.stop());
`;

interface StepOutcome {
  step: string;
  ok: boolean;
  value?: any;
  error?: string;
}

function runDriver(driver: string, cwd: string, script: string): Promise<StepOutcome[]> {
  return new Promise((resolve, reject) => {
    // The client spawns `node`: this machine's (Node 20) from PATH, where ours runs; a HOME and
    // agent directory of the test's own keep the user's settings and sessions out.
    const env = { ...process.env, HOME: cwd, PI_CODING_AGENT_DIR: join(cwd, "agent") };
    execFile(NODE22, [driver, PI_BIN, cwd, script], { cwd, env, timeout: 120_000 }, (err, stdout, stderr) => {
      if (err && !stdout) return reject(new Error(`driver failed: ${err.message}\n${stderr}`));
      resolve(
        stdout
          .split("\n")
          .filter((l) => l.startsWith("{"))
          .map((l) => JSON.parse(l) as StepOutcome),
      );
    });
  });
}

describe.skipIf(!pi16Installed)("pi 1.6.0's RpcClient drives our worker", () => {
  it("passes start, getState, prompt, waitForIdle, promptAndWait, steer, followUp, clearQueue, abort, getEntries, getTree, bash, stop", async () => {
    const dir = tempDir("pi16-rpc-client-");
    dirs.push(dir);
    const script = join(dir.path, "faux.json");
    writeFileSync(
      script,
      JSON.stringify([
        { text: "Hello there." },
        { text: "Hello again." },
        { text: "Once more." },
        { text: "one two three four five six seven eight nine ten", chunkDelayMs: 200 },
      ]),
    );
    const driver = join(dir.path, "driver.mjs");
    writeFileSync(driver, DRIVER(pathToFileURL(join(PI16_PACKAGE, "dist/modes/rpc/rpc-client.js")).href));
    const steps = await runDriver(driver, dir.path, script);
    const by = new Map(steps.map((s) => [s.step, s]));
    expect(steps.filter((s) => !s.ok)).toEqual([]);
    expect(steps.map((s) => s.step)).toEqual([
      "start",
      "getState",
      "prompt",
      "waitForIdle",
      "promptAndWait",
      "prompt (slow)",
      "steer",
      "followUp",
      "clearQueue",
      "abort",
      "getEntries",
      "getTree",
      "bash",
      "stop",
    ]);
    expect(by.get("getState")!.value).toMatchObject({ isStreaming: false, model: "faux-1" });
    expect(by.get("prompt")!.value).toEqual({ disposition: "started" });
    expect(by.get("waitForIdle")!.value.settled).toBe(2);
    expect(by.get("promptAndWait")!.value.types).toEqual(
      expect.arrayContaining(["agent_start", "message_update", "agent_end", "agent_settled"]),
    );
    expect(by.get("promptAndWait")!.value.text).toBe("Once more.");
    expect(by.get("prompt (slow)")!.value).toEqual({ disposition: "started" });
    expect(by.get("steer")!.value).toEqual({ disposition: "queued" });
    expect(by.get("followUp")!.value).toEqual({ disposition: "queued" });
    expect(by.get("clearQueue")!.value).toEqual({ steering: ["steer this"], followUp: ["then this"] });
    expect(by.get("abort")!.value).toEqual({ aborted: true });
    const entries = by.get("getEntries")!.value;
    expect(entries.types.slice(0, 2)).toEqual(["model_change", "thinking_level_change"]);
    // The system message the first request records, and the conversation's 8.
    expect(entries.types.filter((t: string) => t === "message").length).toBe(9);
    expect(entries.leafId).toBe(entries.last);
    expect(by.get("getTree")!.value).toEqual({ roots: 1, leafId: entries.leafId });
    expect(by.get("bash")!.value).toMatchObject({
      output: "from bash\n",
      exitCode: 0,
      cancelled: false,
      truncated: false,
      streamed: "from bash\n",
    });
  }, 150_000);
});
