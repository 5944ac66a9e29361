/**
 * The root supervisor is an actor: spawn, remove, restart, stop and shutdown are
 * handled one at a time, and an agent being removed refuses a restart. Racing
 * `remove --force` against `restart` must never leave a worker without an owner.
 */
import { afterEach, describe, expect, it } from "vitest";
import { alive, TestEnv } from "./harness.js";

const env = new TestEnv();
afterEach(() => env.cleanup());

describe("root supervisor actor", () => {
  it("rm --force and restart sent together, 50 times: the agent is gone or restarted, never both, and no worker is left", async () => {
    const { sup, rec } = env.supervisor();
    const ROUNDS = 50;
    const outcomes = { removed: 0, restarted: 0 };
    const problems: string[] = [];
    const round = async (i: number) => {
      const name = `race${i}`;
      const first = await sup.spawn({ name });
      // Both requests go out in the same tick; which one is sent first alternates.
      const [removed, restarted] =
        i % 2 === 0
          ? await Promise.allSettled([sup.remove(name, { force: true }), sup.restart(name)])
          : await Promise.allSettled([sup.restart(name), sup.remove(name, { force: true })]).then(
              ([b, a]) => [a, b] as const,
            );
      const listed = sup.list().find((a) => a.name === name);
      const workerPids = rec.messages
        .filter((m) => m.type === "event" && m.agent === name && m.event.type === "worker_started")
        .map((m) => (m.type === "event" ? (m.event.pid as number) : 0));
      const running = workerPids.filter((pid) => alive(pid));
      if (removed.status === "fulfilled") {
        outcomes.removed++;
        if (listed) problems.push(`${name}: removed, yet still listed as ${listed.status}`);
        if (running.length > 0) problems.push(`${name}: removed, yet workers ${running.join(",")} still run`);
        if (restarted.status === "fulfilled" && restarted.value.status !== "stopped") {
          problems.push(`${name}: removed and restarted (${restarted.value.status}) both reported done`);
        }
      } else {
        outcomes.restarted++;
        if (restarted.status !== "fulfilled")
          problems.push(
            `${name}: neither removed (${String(removed.reason)}) nor restarted (${String(restarted.reason)})`,
          );
        else if (listed?.status !== "idle" || listed.pid === first.pid)
          problems.push(`${name}: kept but not restarted: ${JSON.stringify(listed)}`);
        if (running.length !== 1) problems.push(`${name}: kept with ${running.length} running workers`);
      }
    };
    // The race is one agent's: five agents race at once (rounds i, i+5, ... in turn each), which
    // also has the root actor take the requests of several agents interleaved.
    const LANES = 5;
    await Promise.all(
      Array.from({ length: LANES }, async (_, lane) => {
        for (let i = lane; i < ROUNDS; i += LANES) await round(i);
      }),
    );
    const allPids = rec.messages
      .filter((m) => m.type === "event" && m.event.type === "worker_started")
      .map((m) => (m.type === "event" ? (m.event.pid as number) : 0));
    await sup.shutdown();
    const left = allPids.filter((pid) => alive(pid));
    expect(problems).toEqual([]);
    expect(outcomes.removed + outcomes.restarted).toBe(ROUNDS);
    // The removal was accepted first in at least the rounds where it was sent first.
    expect(outcomes.removed).toBeGreaterThanOrEqual(ROUNDS / 2);
    expect(left).toEqual([]);
  }, 120_000);

  it("refuses a restart while the agent is being removed, and a second removal", async () => {
    const { sup } = env.supervisor();
    const { pid } = await sup.spawn({ name: "a" });
    const removing = sup.remove("a", { force: true });
    await expect(sup.restart("a")).rejects.toMatchObject({ code: "busy", message: /being removed/ });
    await expect(sup.remove("a", { force: true })).rejects.toMatchObject({
      code: "busy",
      message: /already being removed/,
    });
    expect((await removing).name).toBe("a");
    expect(alive(pid!)).toBe(false);
    expect(sup.list()).toEqual([]);
    await expect(sup.restart("a")).rejects.toMatchObject({ code: "not_found" });
  });

  it("answers a spawn that finished after shutdown began with shutting_down, leaving nothing behind", async () => {
    const { sup } = env.supervisor();
    const spawning = sup.spawn({ name: "late", wait: false });
    const down = sup.shutdown();
    const late = await spawning.catch((err: { code?: string }) => err);
    await down;
    // A spawn accepted before the shutdown message is stopped with everything else.
    if ("code" in late) expect(late.code).toBe("shutting_down");
    else expect(sup.status("late").status).toBe("stopped");
    await expect(sup.spawn({ name: "after" })).rejects.toMatchObject({ code: "shutting_down" });
  });
});
