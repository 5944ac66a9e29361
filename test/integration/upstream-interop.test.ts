/**
 * Interop: the upstream `pi --mode rpc` (@mariozechner/pi-coding-agent 0.73.1, installed
 * by the e2e setup of `npm test` into test/upstream) runs as a pi-orch worker through
 * `--worker-command`, against the mock model server. spawn, prompt, attach and stop
 * must work as they do with our own worker, and a command only the upstream pi knows
 * must reach it.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockModelServer, type MockModelServer } from "../support/mock-model-server.js";
import { World, type Json } from "../support/orch-cli.js";
import { isAlive, tempDir, waitForExit } from "../support/rpc-worker.js";
import {
  mockModelsJson,
  UPSTREAM_CLI as UPSTREAM,
  upstreamInstalled as installed,
} from "../support/upstream-oracle.js";
if (!installed) {
  process.stderr.write(
    `upstream-interop: skipped: ${UPSTREAM} is missing; npm test installs it (test/support/e2e-setup.ts runs node scripts/ensure-upstream.mjs)\n`,
  );
}

let world: World | undefined;
let server: MockModelServer | undefined;
let agentDir: { path: string; cleanup: () => void } | undefined;

afterEach(async () => {
  try {
    await world?.cleanup();
  } finally {
    try {
      await server?.close();
    } finally {
      agentDir?.cleanup();
      world = server = agentDir = undefined;
    }
  }
});

describe.skipIf(!installed)(
  "upstream pi 0.73.1 as a pi-orch worker (skipped when test/upstream is not installed)",
  () => {
    it("spawns, prompts, attaches and stops like our own worker", async () => {
      server = await startMockModelServer();
      agentDir = tempDir("pi-upstream-agent-");
      mkdirSync(agentDir.path, { recursive: true });
      writeFileSync(join(agentDir.path, "models.json"), JSON.stringify(mockModelsJson(server)));
      world = new World({ PI_CODING_AGENT_DIR: agentDir.path, PI_OFFLINE: "1" });
      await world.serve();

      const spawned = JSON.parse(
        await world.ok([
          "spawn",
          "--name",
          "upstream",
          "--worker-command",
          `${process.execPath} ${UPSTREAM} --mode rpc --no-session`,
          "--provider",
          "mock",
          "--model",
          "mock-1",
          "--json",
        ]),
      ) as Json;
      expect(spawned.status).toBe("idle");
      expect(isAlive(spawned.pid)).toBe(true);

      const attach = world.start(["attach", "upstream"]);
      const attachJson = world.start(["attach", "upstream", "--json"]);
      await world.until("attach to connect", attach.stderr, (t) => t.includes("attached to upstream"));
      await world.until("attach --json to connect", attachJson.stderr, (t) => t.includes("attached to upstream"));

      server.enqueue({ text: ["Hello ", "from the ", "mock model."] });
      const prompt = await world.cli(["prompt", "upstream", "say hello", "--wait"]);
      expect(prompt.stderr).toBe("");
      expect(prompt.code).toBe(0);
      expect(prompt.stdout).toContain("Hello from the mock model.");
      expect(server.requests).toHaveLength(1);
      expect(JSON.stringify(server.requests[0].body.messages)).toContain("say hello");

      await world.until("the transcript", attach.stdout, (t) => t.includes("Hello from the mock model."));
      const raw = await world.until("agent_end in the raw stream", attachJson.stdout, (t) => t.includes('"agent_end"'));
      const types = raw
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Json)
        .filter((m) => m.type === "event" && m.agent === "upstream")
        .map((m) => m.event.type);
      expect(types).toEqual(
        expect.arrayContaining(["agent_start", "message_start", "message_update", "message_end", "agent_end"]),
      );
      expect(types.indexOf("agent_start")).toBeLessThan(types.indexOf("agent_end"));

      // The supervisor checks only the envelope of a forwarded command, so the upstream pi
      // answers it itself: with --no-session its own refusal to export an in-memory session.
      // This worker runs with --no-session, so the upstream pi's own answer is its refusal to export memory.
      const exported = await world.cli(["rpc", "upstream", JSON.stringify({ type: "export_html" })]);
      expect(JSON.parse(exported.stdout)).toEqual({
        type: "response",
        command: "export_html",
        success: false,
        error: "Cannot export in-memory session to HTML",
      });

      attach.proc.kill("SIGINT");
      attachJson.proc.kill("SIGINT");
      expect(await attach.exited).toBe(0);
      expect(await attachJson.exited).toBe(0);

      const stopped = JSON.parse(await world.ok(["stop", "upstream", "--json"])) as Json;
      expect(stopped.status).toBe("stopped");
      expect(await waitForExit(spawned.pid, 5000)).toBe(true);
      expect(world.taggedPids().filter((p) => p !== world!.serves[0].pid)).toEqual([]);
    }, 90_000);

    it("a steer sent to an idle agent goes into the next prompt's first request, after the prompt, in upstream pi and in ours", async () => {
      server = await startMockModelServer();
      agentDir = tempDir("pi-upstream-agent-");
      mkdirSync(agentDir.path, { recursive: true });
      const models = JSON.stringify(mockModelsJson(server));
      writeFileSync(join(agentDir.path, "models.json"), models);
      world = new World({ PI_CODING_AGENT_DIR: agentDir.path, PI_OFFLINE: "1" });
      writeFileSync(join(world.home.path, "models.json"), models);
      await world.serve();
      const workers = {
        upstream: ["--worker-command", `${process.execPath} ${UPSTREAM} --mode rpc --no-session`],
        ours: [],
      };
      const seen: Record<string, { requests: number; users: string[] }> = {};
      for (const [name, extra] of Object.entries(workers)) {
        await world.ok(["spawn", "--name", name, ...extra, "--provider", "mock", "--model", "mock-1"]);
        // Straight to the worker (the CLI's steer refuses an idle agent).
        const steer = JSON.parse(
          await world.ok(["rpc", name, JSON.stringify({ type: "steer", message: "also name the README" })]),
        ) as Json;
        expect(steer.success).toBe(true);
        const before = server.requests.length;
        server.enqueue({ text: ["Both done."] });
        const prompt = await world.cli(["prompt", name, "list the files", "--wait"]);
        expect(prompt.code, prompt.stderr).toBe(0);
        const first = server.requests[before]!.body.messages as Json[];
        seen[name] = {
          requests: server.requests.length - before,
          users: first
            .filter((m) => m.role === "user")
            .map((m) =>
              typeof m.content === "string" ? m.content : (m.content as Json[]).map((p) => p.text).join(""),
            ),
        };
      }
      expect(seen.upstream).toEqual({ requests: 1, users: ["list the files", "also name the README"] });
      expect(seen.ours).toEqual(seen.upstream);
    }, 90_000);
  },
);
