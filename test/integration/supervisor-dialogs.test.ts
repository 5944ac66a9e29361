/**
 * An extension dialog of a real worker answered through the supervisor: the
 * `extension_ui_request` arrives as an event, the answer goes back with `rpc`
 * keeping the dialog's id, and the supervisor does not wait for a reply pi never sends.
 */
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TestEnv } from "../supervisor/harness.js";

const PI = [process.execPath, resolve(import.meta.dirname, "../../dist/cli/pi.js"), "--mode", "rpc"];
const env = new TestEnv();
afterEach(() => env.cleanup());

describe("extension dialogs through the supervisor", () => {
  it("forwards a confirm answer with the dialog's id and acknowledges it at once", async () => {
    const home = env.home();
    const extension = join(home, "ask.ts");
    writeFileSync(
      extension,
      `export default function (pi) {
        pi.on("tool_call", async (event, ctx) => {
          const ok = await ctx.ui.confirm("Run it?", event.input.command, { timeout: 20000 });
          if (!ok) return { block: true, reason: "the user said no" };
        });
      }`,
    );
    const script = join(home, "script.json");
    writeFileSync(
      script,
      JSON.stringify([{ toolCalls: [{ name: "bash", arguments: { command: "echo allowed" } }] }, { text: "done" }]),
    );
    const { sup, rec } = env.supervisor({ defaultWorkerCommand: PI, timings: { rpcTimeoutMs: 20_000 } });
    await sup.spawn({ name: "d", provider: "faux", extraArgs: ["--faux-script", script, "--extension", extension] });
    await sup.rpc("d", { type: "prompt", message: "go" });
    const request = (await rec.waitFor(
      (m) => m.type === "event" && m.event.type === "extension_ui_request" && m.event.method === "confirm",
    )) as unknown as {
      event: { id: string };
    };
    const started = Date.now();
    const ack = await sup.rpc("d", { type: "extension_ui_response", id: request.event.id, confirmed: true });
    expect(ack).toMatchObject({ type: "response", command: "extension_ui_response", success: true });
    expect(Date.now() - started).toBeLessThan(2000);
    const end = (await rec.waitFor((m) => m.type === "event" && m.event.type === "tool_execution_end")) as unknown as {
      event: { isError: boolean; result: { content: { text: string }[] } };
    };
    expect(end.event.isError).toBe(false);
    expect(end.event.result.content[0].text).toContain("allowed");
  });
});
