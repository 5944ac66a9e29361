import { describe, expect, it } from "vitest";
import {
  checkPresence,
  nextPingInMs,
  pingTimeLeft,
  type PresenceAction,
  type PresenceState,
} from "../../supervisor/presence.js";
import { countRunTokens } from "../../supervisor/run-limits.js";

const NOW = 1_000_000;
const MB = 1024 * 1024;
const idle: PresenceState = { status: "idle", lastEventAt: NOW - 50, pingOutstanding: false, rssBytes: null };
const limits = { stallTimeoutMs: 1_000 };

describe("checkPresence", () => {
  const table: [string, PresenceState, { stallTimeoutMs: number; maxMemoryMb?: number }, PresenceAction[]][] = [
    ["an idle agent gets a ping", idle, limits, [{ kind: "ping" }]],
    ["no second ping while one is out", { ...idle, pingOutstanding: true }, limits, []],
    ["a busy agent with recent events gets a ping", { ...idle, status: "busy" }, limits, [{ kind: "ping" }]],
    [
      "a busy agent silent past the stall timeout stalls, and is pinged",
      { ...idle, status: "busy", lastEventAt: NOW - 1_000 },
      limits,
      [{ kind: "stall", silentMs: 1_000 }, { kind: "ping" }],
    ],
    ["an idle agent never stalls, however silent", { ...idle, lastEventAt: 0 }, limits, [{ kind: "ping" }]],
    [
      "an already stalled agent is not stalled again",
      { ...idle, status: "stalled", lastEventAt: 0 },
      limits,
      [{ kind: "ping" }],
    ],
    [
      "under the memory limit: a ping",
      { ...idle, rssBytes: 100 * MB },
      { ...limits, maxMemoryMb: 100 },
      [{ kind: "ping" }],
    ],
    [
      "over the memory limit: killed, no ping",
      { ...idle, rssBytes: 101 * MB },
      { ...limits, maxMemoryMb: 100 },
      [{ kind: "over_memory", message: "process tree RSS 101 MB is over the 100 MB limit" }],
    ],
    ["an unknown RSS never trips the limit", idle, { ...limits, maxMemoryMb: 1 }, [{ kind: "ping" }]],
    [
      "stalled and over memory: both, in that order",
      { ...idle, status: "busy", lastEventAt: 0, rssBytes: 2 * MB, pingOutstanding: true },
      { ...limits, maxMemoryMb: 1 },
      [
        { kind: "stall", silentMs: NOW },
        { kind: "over_memory", message: "process tree RSS 2 MB is over the 1 MB limit" },
      ],
    ],
  ];
  for (const [title, state, lim, expected] of table) {
    it(title, () => expect(checkPresence(state, lim, NOW)).toEqual(expected));
  }
});

describe("countRunTokens", () => {
  const assistant = (totalTokens: unknown) => ({ role: "assistant", usage: { totalTokens } });
  const table: [
    string,
    { tokens: number; abortReason: string | null },
    unknown,
    number | undefined,
    { tokens: number; over: string | null },
  ][] = [
    [
      "counts an assistant message's tokens",
      { tokens: 10, abortReason: null },
      assistant(5),
      100,
      { tokens: 15, over: null },
    ],
    [
      "no limit: nothing counted",
      { tokens: 10, abortReason: null },
      assistant(5),
      undefined,
      { tokens: 10, over: null },
    ],
    [
      "user messages do not count",
      { tokens: 10, abortReason: null },
      { role: "user", usage: { totalTokens: 5 } },
      100,
      { tokens: 10, over: null },
    ],
    [
      "a message without numeric usage does not count",
      { tokens: 10, abortReason: null },
      assistant("5"),
      100,
      { tokens: 10, over: null },
    ],
    [
      "exactly at the limit is still fine",
      { tokens: 95, abortReason: null },
      assistant(5),
      100,
      { tokens: 100, over: null },
    ],
    [
      "past the limit: abort, saying by how much",
      { tokens: 95, abortReason: null },
      assistant(6),
      100,
      { tokens: 101, over: "101 tokens used, over the 100-token limit" },
    ],
    [
      "already aborted: counted, not aborted again",
      { tokens: 101, abortReason: "over" },
      assistant(6),
      100,
      { tokens: 107, over: null },
    ],
  ];
  for (const [title, run, message, max, expected] of table) {
    it(title, () => expect(countRunTokens(run, message, max)).toEqual(expected));
  }
});

describe("pingTimeLeft", () => {
  const table: [string, number, number, number, number][] = [
    // what, deadline, elapsed, waited for a CPU, left
    ["no wait: the deadline is wall time", 10_000, 4_000, 0, 6_000],
    ["no wait, past the deadline: none left", 10_000, 10_000, 0, 0],
    ["the time spent waiting for a CPU is given back", 10_000, 10_000, 7_000, 7_000],
    ["a wait longer than the time elapsed leaves the whole deadline", 10_000, 3_000, 9_000, 10_000],
    ["at most six deadlines of wall time, however long the wait", 10_000, 55_000, 55_000, 5_000],
    ["past six deadlines: none left", 10_000, 60_000, 60_000, 0],
    ["a negative reading counts as no wait", 10_000, 10_000, -5, 0],
  ];
  it.each(table)("%s", (_what, deadline, elapsed, waited, left) => {
    expect(pingTimeLeft(deadline, elapsed, waited)).toBe(left);
  });
});

describe("nextPingInMs", () => {
  it.each([
    ["working, or just busy: the interval", { pingIntervalMs: 5_000 }, 0, 5_000],
    ["first idle tick: twice", { pingIntervalMs: 5_000 }, 1, 10_000],
    ["second: four times", { pingIntervalMs: 5_000 }, 2, 20_000],
    ["third: six intervals at most by default", { pingIntervalMs: 5_000 }, 3, 30_000],
    ["idle for days: still six intervals", { pingIntervalMs: 5_000 }, 100_000, 30_000],
    ["a maximum set", { pingIntervalMs: 5_000, idlePingMaxMs: 60_000 }, 4, 60_000],
    ["a maximum below the interval: the interval", { pingIntervalMs: 5_000, idlePingMaxMs: 1_000 }, 3, 5_000],
    ["a maximum equal to the interval: no drift", { pingIntervalMs: 200, idlePingMaxMs: 200 }, 3, 200],
  ])("%s", (_what, timings, idlePings, ms) => {
    expect(nextPingInMs(timings, idlePings)).toBe(ms);
  });
});
