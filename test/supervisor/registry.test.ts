import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadRegistry, registryPath, saveRegistry } from "../../supervisor/registry.js";
import { DEFAULT_RESTART_POLICY, type AgentRecord } from "../../supervisor/types.js";

const homes: string[] = [];
const home = () => {
  const h = mkdtempSync(join(tmpdir(), "po-reg-"));
  homes.push(h);
  return h;
};
afterEach(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});

const record = (name: string, status: AgentRecord["status"]): AgentRecord => ({
  name,
  id: `${name}-id`,
  cwd: "/tmp",
  policy: DEFAULT_RESTART_POLICY,
  onStall: "notify",
  limits: {},
  createdAt: 1,
  status,
  pid: status === "idle" ? 4242 : null,
  restarts: 2,
  lastExit: null,
  sessionFile: `/s/${name}.jsonl`,
  lastSeenAt: 5,
});

describe("registry", () => {
  it("round-trips records and leaves no temp file behind", () => {
    const h = home();
    saveRegistry(h, [record("a", "stopped"), record("b", "failed")]);
    expect(readdirSync(h)).toEqual(["agents.json"]);
    expect(statSync(registryPath(h)).mode & 0o777).toBe(0o600);
    const { agents, warnings } = loadRegistry(h);
    expect(warnings).toEqual([]);
    expect(agents.map((a) => [a.name, a.status, a.sessionFile, a.restarts])).toEqual([
      ["a", "stopped", "/s/a.jsonl", 2],
      ["b", "failed", "/s/b.jsonl", 2],
    ]);
  });

  it("replaces the whole file on every save", () => {
    const h = home();
    saveRegistry(h, [record("a", "stopped"), record("b", "stopped")]);
    saveRegistry(h, [record("c", "stopped")]);
    expect(loadRegistry(h).agents.map((a) => a.name)).toEqual(["c"]);
  });

  it("shows agents that were live as stopped with reason supervisor exited", () => {
    const h = home();
    saveRegistry(h, [record("live", "idle"), record("waiting", "backoff"), record("done", "stopped")]);
    const byName = Object.fromEntries(loadRegistry(h, 99).agents.map((a) => [a.name, a]));
    expect(byName.live).toMatchObject({ status: "stopped", statusReason: "supervisor exited", pid: null, sessionFile: "/s/live.jsonl" });
    expect(byName.live.lastExit).toMatchObject({ reason: "supervisor_exited", at: 99 });
    expect(byName.waiting).toMatchObject({ status: "stopped", statusReason: "supervisor exited" });
    expect(byName.done.statusReason).toBeUndefined();
  });

  it("moves a corrupt file aside instead of failing", () => {
    const h = home();
    writeFileSync(registryPath(h), "{not json");
    const { agents, warnings } = loadRegistry(h, 7);
    expect(agents).toEqual([]);
    expect(warnings[0]).toMatch(/not valid JSON.*moved it to .*agents\.json\.corrupt-7/);
    expect(readFileSync(join(h, "agents.json.corrupt-7"), "utf8")).toBe("{not json");
  });

  it("starts empty when there is no file", () => {
    expect(loadRegistry(home())).toEqual({ agents: [], warnings: [] });
  });
});
