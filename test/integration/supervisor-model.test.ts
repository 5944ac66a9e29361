/**
 * The model an agent runs, as every supervisor client sees it (list, status, the TUI):
 * what the worker resolved in its get_state (`faux/faux-1` for `--provider faux`), while
 * the registry on disk keeps what was asked, so a restart asks the same again.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TestEnv } from "../supervisor/harness.js";

const PI = [process.execPath, resolve(import.meta.dirname, "../../dist/cli/pi.js"), "--mode", "rpc", "--no-session"];
const env = new TestEnv();
afterEach(() => env.cleanup());

describe("the model in the supervisor's agent info", () => {
  it("is the worker's own provider/id once it answered, and stays the last one after it stopped", async () => {
    const { sup, home } = env.supervisor({ defaultWorkerCommand: PI });
    const spawned = await sup.spawn({ name: "m", provider: "faux" });
    expect(spawned).toMatchObject({ status: "idle", provider: "faux", model: "faux-1" });
    expect(sup.list()[0]).toMatchObject({ provider: "faux", model: "faux-1" });
    await sup.stop("m");
    expect(sup.status("m")).toMatchObject({ status: "stopped", provider: "faux", model: "faux-1" });
    const registry = JSON.parse(readFileSync(join(home, "agents.json"), "utf8")) as unknown;
    const rows = (Array.isArray(registry) ? registry : ((registry as { agents?: unknown[] }).agents ?? [])) as { name: string; provider?: string; model?: string }[];
    const row = rows.find((a) => a.name === "m");
    expect(row).toMatchObject({ provider: "faux" });
    expect(row?.model).toBeUndefined();
  });
});
