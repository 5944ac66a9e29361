/**
 * pi's reload-runtime.ts example, unchanged: `/reload-runtime` runs `ctx.reload()`,
 * which reads settings.json again. The same RPC script on our worker and on upstream
 * pi 0.73.1: auto-compaction changed in the file takes effect; the queue modes keep
 * the session's values (the file's new steering mode and the client's follow-up mode).
 * Skipped when test/upstream is not installed (the e2e project's setup, test/support/e2e-setup.ts, installs it).
 */
import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RpcWorker, killAllWorkers, tempDir } from "../support/rpc-worker.js";

const PACKAGE = resolve(import.meta.dirname, "../upstream/node_modules/@mariozechner/pi-coding-agent");
const UPSTREAM = join(PACKAGE, "dist/cli.js");
const installed = existsSync(UPSTREAM);

type Implementation = "ours" | "upstream";
const dirs: { path: string; cleanup: () => void }[] = [];

afterEach(async () => {
  await killAllWorkers();
  for (const d of dirs.splice(0)) d.cleanup();
});

describe.skipIf(!installed)("settings.json read again on reload: our worker and upstream pi", () => {
  it.each<Implementation>(["ours", "upstream"])("on %s", async (impl) => {
    const home = tempDir(`pi-reload-${impl}-home-`);
    const project = tempDir(`pi-reload-${impl}-project-`);
    dirs.push(home, project);
    const settings = join(home.path, "settings.json");
    writeFileSync(settings, JSON.stringify({ steeringMode: "one-at-a-time", followUpMode: "one-at-a-time" }));
    const args = ["--mode", "rpc", "--no-session", "-e", join(PACKAGE, "examples/extensions/reload-runtime.ts")];
    const env =
      impl === "ours"
        ? { PI_ORCH_HOME: home.path, ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "" }
        : { PI_CODING_AGENT_DIR: home.path, PI_OFFLINE: "1" };
    const w = new RpcWorker(impl === "ours" ? [...args, "--provider", "faux"] : args, {
      cwd: project.path,
      env,
      ...(impl === "upstream" ? { bin: [process.execPath, UPSTREAM] } : {}),
    });
    const state = async () => (await w.request({ type: "get_state" }, 30_000)).data;
    expect(await state()).toMatchObject({
      steeringMode: "one-at-a-time",
      followUpMode: "one-at-a-time",
      autoCompactionEnabled: true,
    });

    // The client changes the follow-up mode; the file then changes the steering mode and compaction.
    expect(await w.request({ type: "set_follow_up_mode", mode: "all" }, 30_000)).toMatchObject({ success: true });
    writeFileSync(
      settings,
      JSON.stringify({ steeringMode: "all", followUpMode: "one-at-a-time", compaction: { enabled: false } }),
    );
    expect(await state()).toMatchObject({ steeringMode: "one-at-a-time", autoCompactionEnabled: true });
    expect(await w.request({ type: "prompt", message: "/reload-runtime" }, 30_000)).toMatchObject({ success: true });
    expect(await state()).toMatchObject({
      steeringMode: "one-at-a-time",
      followUpMode: "all",
      autoCompactionEnabled: false,
    });
  });
});
