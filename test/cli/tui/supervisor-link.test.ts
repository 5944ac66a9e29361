/**
 * The TUI's link to a real supervisor (`serve` of the built CLI, real workers of a
 * provider whose key is unset): what it says when an agent has no API key. afterEach kills every process
 * the test started and removes its folders.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { SupervisorLink } from "../../../cli/tui/supervisor-link.js";
import { TuiStore } from "../../../cli/tui/store.js";
import { IpcClient } from "../../../ipc/client.js";
import { BIN, World } from "../../support/orch-cli.js";

let world: World | undefined;

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error("dist/ is missing: run npm run build first");
});

afterEach(async () => {
  await world?.cleanup();
  world = undefined;
});

describe("the TUI's supervisor link", () => {
  it("a prompt or a new agent refused for want of an API key says how to give the supervisor one, not pi's --api-key", async () => {
    world = new World();
    await world.serve();
    await world.ok(["spawn", "--name", "nokey", "--provider", "anthropic"]);
    const home = world.home.path;
    const store = new TuiStore();
    const link = new SupervisorLink(store, { connect: () => IpcClient.connect({ home }), home });
    try {
      await vi.waitFor(() => expect(store.getState().connection.state).toBe("connected"), { timeout: 10_000 });
      const refused = await link.rpc("nokey", { type: "prompt", message: "hi" });
      if (refused.success) throw new Error("the keyless agent took the prompt");
      expect(refused.error).toContain(
        `providers.anthropic.apiKey in ${home}/models.json, or ANTHROPIC_API_KEY in the supervisor's environment`,
      );
      expect(refused.error).not.toContain("--api-key");
      const spawned = link.spawn({ name: "nokey2", provider: "anthropic", prompt: "hi", cwd: world.cwd.path });
      await expect(spawned).rejects.toThrow("ANTHROPIC_API_KEY in the supervisor's environment");
      await expect(spawned).rejects.not.toThrow("--api-key");
    } finally {
      await link.close();
      store.dispose();
    }
  }, 60_000);

  it("connects again when the supervisor does not answer its subscribe in time (busy spawning a fleet)", async () => {
    // A supervisor on a real socket that lists no agents and leaves the first connection's
    // subscribe unanswered, as one spawning 64 agents on a loaded machine did.
    const dir = mkdtempSync(join(tmpdir(), "pi-link-slow-"));
    const socketPath = join(dir, "orch.sock");
    let connections = 0;
    const server: Server = createServer((socket) => {
      const n = ++connections;
      let buffered = "";
      socket.on("data", (chunk) => {
        buffered += chunk.toString();
        for (let i = buffered.indexOf("\n"); i >= 0; i = buffered.indexOf("\n")) {
          const req = JSON.parse(buffered.slice(0, i)) as { id: string; type: string };
          buffered = buffered.slice(i + 1);
          if (req.type === "list") socket.write(`${JSON.stringify({ id: req.id, ok: true, data: [] })}\n`);
          if (req.type === "subscribe" && n > 1)
            socket.write(`${JSON.stringify({ id: req.id, ok: true, data: { agents: null, lastSeq: {} } })}\n`);
        }
      });
      socket.on("error", () => undefined);
    });
    await new Promise<void>((r) => server.listen(socketPath, r));
    const store = new TuiStore();
    const link = new SupervisorLink(store, {
      connect: () => IpcClient.connect({ socketPath, answerDeadlineMs: 200 }),
      retryMs: 10,
    });
    try {
      await vi.waitFor(() => expect(store.getState().connection.state).toBe("connected"), { timeout: 10_000 });
      expect(connections).toBeGreaterThanOrEqual(2);
    } finally {
      await link.close();
      store.dispose();
      await new Promise((r) => server.close(r));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
