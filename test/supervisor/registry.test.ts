import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { registryPath } from "../../shared/paths.js";
import { loadRegistry, RegistryWriter, saveRegistry } from "../../supervisor/registry.js";
import type { AgentRecord } from "../../shared/schema/agent.js";
import { DEFAULT_RESTART_POLICY } from "../../supervisor/types.js";

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

  it("writes a frozen record (an actor's, kept per state) as it writes the same record unfrozen", () => {
    const [plain, frozen] = [home(), home()];
    saveRegistry(plain, [record("a", "idle"), record("b", "stopped")], 7);
    const kept = Object.freeze(record("a", "idle"));
    saveRegistry(frozen, [kept, Object.freeze(record("b", "stopped"))], 7);
    expect(readFileSync(registryPath(frozen), "utf8")).toBe(readFileSync(registryPath(plain), "utf8"));
    saveRegistry(frozen, [kept], 8);
    expect(loadRegistry(frozen).agents.map((a) => a.name)).toEqual(["a"]);
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
    expect(byName.live).toMatchObject({
      status: "stopped",
      statusReason: "supervisor exited",
      pid: null,
      sessionFile: "/s/live.jsonl",
    });
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

  it.each([10, 4, 1])(
    "keeps the complete records of a file cut in the middle of record %i of 10 (a write cut short while stopped)",
    (cutInside) => {
      const h = home();
      const names = Array.from({ length: 10 }, (_, i) => `a${i + 1}`);
      saveRegistry(
        h,
        names.map((n) => ({ ...record(n, "stopped"), statusReason: 'quote " brace } bracket ] inside' })),
      );
      const text = readFileSync(registryPath(h), "utf8");
      const cutAt = text.search(new RegExp(`"name": ?"a${cutInside}"`)) + 5;
      writeFileSync(registryPath(h), text.slice(0, cutAt));
      const { agents, warnings } = loadRegistry(h, 8);
      expect(agents.map((a) => a.name)).toEqual(names.slice(0, cutInside - 1));
      if (cutInside > 1) expect(agents[0]?.statusReason).toBe('quote " brace } bracket ] inside');
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(
        cutInside === 1
          ? /moved it to .*corrupt-8; no complete agent record could be read/
          : new RegExp(
              `moved it to .*corrupt-8; kept the ${cutInside - 1} complete agent record\\(s\\) it holds, the rest is cut off`,
            ),
      );
    },
  );

  it("keeps every record when only the file's end is damaged", () => {
    const h = home();
    saveRegistry(h, [record("a", "stopped"), record("b", "failed")]);
    writeFileSync(registryPath(h), `${readFileSync(registryPath(h), "utf8").trimEnd().slice(0, -1)}!`);
    const { agents, warnings } = loadRegistry(h, 9);
    expect(agents.map((a) => a.name)).toEqual(["a", "b"]);
    expect(warnings[0]).toMatch(/kept the 2 complete agent record\(s\) it holds$/);
  });

  it("checks every row with the AgentRecord schema: fills what older files lack, skips what is wrong", () => {
    const h = home();
    const {
      policy: _policy,
      onStall: _onStall,
      limits: _limits,
      restarts: _restarts,
      ...old
    } = record("old", "stopped");
    const rows = [
      old,
      { ...record("badstatus", "stopped"), status: "sleeping" },
      { ...record("nocwd", "stopped"), cwd: undefined },
      { ...record("badpolicy", "stopped"), policy: { ...DEFAULT_RESTART_POLICY, intensity: -1 } },
      "not a row",
      record("fine", "failed"),
    ];
    writeFileSync(registryPath(h), JSON.stringify({ version: 1, savedAt: 1, agents: rows }));
    const { agents, warnings } = loadRegistry(h);
    expect(agents.map((a) => a.name)).toEqual(["old", "fine"]);
    expect(agents[0]).toMatchObject({ policy: DEFAULT_RESTART_POLICY, onStall: "notify", limits: {}, restarts: 0 });
    expect(warnings).toHaveLength(4);
    expect(warnings[0]).toMatch(/skipped entry 1 \("badstatus"\) of .*agents\.json: \/status/);
    expect(warnings[1]).toMatch(/skipped entry 2 \("nocwd"\).*cwd/);
    expect(warnings[2]).toMatch(/skipped entry 3 \("badpolicy"\).*\/policy\/intensity/);
    expect(warnings[3]).toMatch(/skipped entry 4 of .*: not an object/);
  });

  it("starts empty when there is no file", () => {
    expect(loadRegistry(home())).toEqual({ agents: [], warnings: [] });
  });
});

describe("registry writer", () => {
  const names = (h: string) => loadRegistry(h).agents.map((a) => a.name);

  it("writes a burst of changes as one or two writes, and durable() resolves once the last is on disk", async () => {
    const h = home();
    let agents: AgentRecord[] = [];
    let writes = 0;
    const writer = new RegistryWriter(h, () => {
      writes++;
      return agents;
    });
    for (let i = 1; i <= 50; i++) {
      agents = [...agents, record(`a${i}`, "stopped")];
      writer.markDirty();
    }
    await writer.durable();
    expect(names(h)).toHaveLength(50);
    expect(writes).toBeLessThanOrEqual(2);
    await expect(writer.durable()).resolves.toBeUndefined();
    expect(readdirSync(h).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("a flush has the last word over a write still under way", async () => {
    const h = home();
    let agents = [record("old", "stopped")];
    const writer = new RegistryWriter(h, () => agents);
    writer.markDirty();
    // The write begins on its timer (its snapshot: "old") and is writing when this runs.
    await new Promise((r) => setTimeout(r, 0));
    agents = [record("new", "stopped")];
    writer.flush();
    await writer.durable();
    expect(names(h)).toEqual(["new"]);
    expect(readdirSync(h).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });
});
