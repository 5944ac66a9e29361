/**
 * `ctx.reload()` from an extension command in the built worker: `session_shutdown` and
 * `session_start` with reason `reload`, the changed extension file's new version loaded
 * (its new command listed, the old one gone), and a skill added since start-up listed.
 * Run `npm run build` first.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RpcWorker, killAllWorkers, tempDir } from "../support/rpc-worker.js";

let home: { path: string; cleanup: () => void };
let project: { path: string; cleanup: () => void };

beforeEach(() => {
  home = tempDir("pi-reload-home-");
  project = tempDir("pi-reload-project-");
});

afterEach(async () => {
  await killAllWorkers();
  home.cleanup();
  project.cleanup();
});

/** An extension whose command is named `version`, which notifies its session events and reloads on `/<version>`. */
function writeExtension(path: string, version: string): void {
  writeFileSync(
    path,
    `export default (pi: any) => {
       pi.on("session_start", (e: any, ctx: any) => ctx.ui.notify("${version} start " + e.reason, "info"));
       pi.on("session_shutdown", (e: any, ctx: any) => ctx.ui.notify("${version} shutdown " + e.reason, "info"));
       pi.registerCommand("${version}", { handler: async (_args: string, ctx: any) => ctx.reload() });
     };`,
  );
}

const notices = (w: RpcWorker, from: number) =>
  w.received
    .slice(from)
    .filter((l) => l.type === "extension_ui_request" && l.method === "notify")
    .map((l) => l.message);

describe("ctx.reload()", () => {
  it("reloads extensions, skills and prompts, with session_shutdown / session_start of reason reload", async () => {
    const ext = join(project.path, "reloading.ts");
    writeExtension(ext, "v1");
    const w = new RpcWorker(["--mode", "rpc", "--provider", "faux", "-e", ext], {
      cwd: project.path,
      env: { PI_ORCH_HOME: home.path, ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "" },
    });
    const names = async () =>
      ((await w.request({ type: "get_commands" })).data.commands as { name: string }[]).map((c) => c.name);
    expect(await names()).toEqual(["v1"]);

    writeExtension(ext, "v2");
    mkdirSync(join(home.path, "skills", "later"), { recursive: true });
    writeFileSync(
      join(home.path, "skills", "later", "SKILL.md"),
      "---\nname: later\ndescription: Added after start-up.\n---\nDo it later.\n",
    );
    expect(await names()).toEqual(["v1"]);
    const from = w.received.length;
    expect(await w.request({ type: "prompt", message: "/v1" })).toMatchObject({ success: true });
    await w.waitFor(
      (l) => l.type === "extension_ui_request" && l.method === "notify" && l.message === "v2 start reload",
      undefined,
      from,
    );
    expect(notices(w, from)).toEqual(["v1 shutdown reload", "v2 start reload"]);
    expect(await names()).toEqual(expect.arrayContaining(["v2", "skill:later"]));
    expect(await names()).not.toContain("v1");
  });
});
