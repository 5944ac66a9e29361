/**
 * The worker answers commands while a reply streams, however fast it streams: the faux
 * model with no delay hands over 20,000 words without waiting on anything, and a
 * supervisor's presence ping (`get_state`) must not wait for the end of the reply, nor
 * behind a pile of events written faster than they are read.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { figures } from "../faults/support.js";
import { killAllWorkers, RpcWorker, tempDir } from "../support/rpc-worker.js";

const dirs: { cleanup: () => void }[] = [];
afterEach(async () => {
  await killAllWorkers();
  for (const d of dirs.splice(0)) d.cleanup();
});

it("get_state is answered in the middle of a 20,000-word reply streamed with no delay", async () => {
  const dir = tempDir("pi-responsive-");
  dirs.push(dir);
  const script = join(dir.path, "script.json");
  writeFileSync(script, JSON.stringify([{ text: Array.from({ length: 20_000 }, (_, i) => `w${i}`).join(" ") }]));
  const w = new RpcWorker(["--mode", "rpc", "--provider", "faux", "--no-session", "--faux-script", script], {
    cwd: dir.path,
  });
  await w.request({ type: "get_state" });
  await w.request({ type: "prompt", message: "go" });
  // Ask once the stream has begun, then keep asking until the reply ends.
  await w.waitFor((l) => l.type === "message_update");
  let asked = 0;
  // When each ask went out, and when its answer was first seen (to the 5 ms of the timer).
  const sentAt = new Map<string, number>();
  const waited: number[] = [];
  let scanned = 0;
  const ask = setInterval(() => {
    const now = performance.now();
    for (; scanned < w.received.length; scanned++) {
      const l = w.received[scanned]!;
      if (l.type === "response" && sentAt.has(l.id)) waited.push(now - sentAt.get(l.id)!);
    }
    asked++;
    sentAt.set(`g${asked}`, now);
    w.proc.stdin!.write(`${JSON.stringify({ id: `g${asked}`, type: "get_state" })}\n`);
  }, 5);
  try {
    await w.waitFor((l) => l.type === "agent_end", 60_000);
  } finally {
    clearInterval(ask);
  }
  const end = w.received.findIndex((l) => l.type === "agent_end");
  const answeredBefore = w.received
    .slice(0, end)
    .filter((l) => l.type === "response" && l.command === "get_state" && /^g\d+$/.test(l.id)).length;
  const updatesAfterFirstAnswer = w.received
    .slice(
      w.received.findIndex((l) => l.type === "response" && /^g\d+$/.test(l.id ?? "")),
      end,
    )
    .filter((l) => l.type === "message_update").length;
  const sorted = waited.sort((a, b) => a - b);
  const p50 = sorted[sorted.length >> 1] ?? Number.POSITIVE_INFINITY;
  figures("rpc-responsive", {
    asked,
    answered_mid_reply: answeredBefore,
    p50_ms: Math.round(p50),
    p95_ms: Math.round(sorted[Math.floor(sorted.length * 0.95)] ?? -1),
    max_ms: Math.round(sorted.at(-1) ?? -1),
  });
  expect(answeredBefore).toBeGreaterThan(0);
  // Not answered at the very end: most of the reply streamed after the first answer.
  expect(updatesAfterFirstAnswer).toBeGreaterThan(1_000);
  // The reply streams no faster than it is read, so an answer waits behind at most one
  // pipe's worth of events: most asks are answered while the reply still streams (before
  // the pacing: 4-6 of 62-72, behind thousands of queued lines). Counted, not timed; the
  // wait itself is a figure (FAULTS.md), since a loaded CI machine stretches any time.
  expect(answeredBefore).toBeGreaterThan(asked / 2);
});
