/**
 * The differential suite: the same script against the upstream pi 1.6.0 (on the Node 22
 * it needs) and our worker, each with the same mock model replies, compared key by key.
 * The suite fails on any difference that is not listed (with its reason) in deliberate.ts,
 * on a command or event of pi 1.6.0's RPC the script never exercised, and on a list entry
 * that no longer matches anything.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PI16_PACKAGE, pi16Installed } from "../support/upstream-pi16.js";
import { compareShapes, isDeliberate, type Difference } from "./compare.js";
import { DELIBERATE, OPEN } from "./deliberate.js";
import { runScript, startSide, type Side, type Step, type StepRecord } from "./harness.js";
import { NO_SESSION_SCRIPT, SCRIPT } from "./script.js";

const sides: Side[] = [];
afterAll(async () => {
  await Promise.all(sides.map((s) => s.cleanup()));
});

/** Every command type of pi 1.6.0's `RpcCommand` union, read from its rpc-types.d.ts. */
function upstreamCommands(): string[] {
  const types = readFileSync(join(PI16_PACKAGE, "dist/modes/rpc/rpc-types.d.ts"), "utf8");
  const union = types.slice(
    types.indexOf("export type RpcCommand ="),
    types.indexOf("export interface RpcSlashCommand"),
  );
  return [...union.matchAll(/type: "([a-z_]+)"/g)].map((m) => m[1]);
}

/** Every event of pi 1.6.0's JSON/RPC stream (docs/json.md, docs/rpc-extension-ui.md). */
const UPSTREAM_EVENTS = [
  "agent_start",
  "agent_end",
  "agent_settled",
  "turn_start",
  "turn_end",
  "message_start",
  "message_update",
  "message_end",
  "tool_execution_start",
  "tool_execution_update",
  "tool_execution_end",
  "queue_update",
  "entry_appended",
  "session_info_changed",
  "thinking_level_changed",
  "compaction_start",
  "compaction_end",
  "auto_retry_start",
  "auto_retry_end",
  "bash_execution_update",
  "extension_error",
  "extension_ui_request",
];

type Verdict = "same" | "deliberate" | "open" | "different" | "missing";

/** Whether ours lacks what pi has in this check: a command it does not know, or an event type it never sent. */
function isMissing(pi: StepRecord, ours: StepRecord, part: "responses" | "events"): boolean {
  if (part === "responses")
    return pi.responses.some(
      (r, i) => r.success === true && String(ours.responses[i]?.error ?? "").startsWith("Unknown command"),
    );
  const ourTypes = new Set(ours.events.map((e) => e.type));
  return pi.events.some((e) => !ourTypes.has(e.type));
}

async function runBoth(script: Step[], args?: string[]) {
  const [pi, ours] = await Promise.all([startSide("pi", args), startSide("ours", args)]);
  sides.push(pi, ours);
  const [piRecords, ourRecords] = await Promise.all([runScript(pi, script), runScript(ours, script)]);
  return { piRecords, ourRecords };
}

describe.skipIf(!pi16Installed)("RPC differential: upstream pi 1.6.0 and ours, same script, same mock model", () => {
  it("differs only where deliberate.ts says why, and covers every command and event of pi 1.6.0", async () => {
    const runs = [
      { script: SCRIPT, ...(await runBoth(SCRIPT)) },
      { script: NO_SESSION_SCRIPT, ...(await runBoth(NO_SESSION_SCRIPT, ["--no-session"])) },
    ];
    const counts: Record<Verdict, number> = { same: 0, deliberate: 0, open: 0, different: 0, missing: 0 };
    const unexpected: { check: string; diffs: Difference[] }[] = [];
    const rows: string[] = [];
    const used = new Set<string>();
    for (const { script, piRecords, ourRecords } of runs) {
      for (const step of script) {
        const a = piRecords.get(step.name)!;
        const b = ourRecords.get(step.name)!;
        for (const part of ["responses", "events"] as const) {
          const check = `${step.name} / ${part}`;
          const diffs = compareShapes(a[part], b[part], part);
          for (const d of diffs) {
            const hit = isDeliberate(DELIBERATE, step.name, d) ?? isDeliberate(OPEN, step.name, d);
            if (hit) used.add(`${hit.step}|${hit.path}`);
          }
          if (diffs.length === 0) {
            counts.same++;
            continue;
          }
          const unlisted = diffs.filter(
            (d) => !isDeliberate(DELIBERATE, step.name, d) && !isDeliberate(OPEN, step.name, d),
          );
          const verdict: Verdict =
            unlisted.length > 0
              ? isMissing(a, b, part)
                ? "missing"
                : "different"
              : diffs.some((d) => isDeliberate(OPEN, step.name, d))
                ? "open"
                : "deliberate";
          counts[verdict]++;
          if (unlisted.length > 0) {
            unexpected.push({ check, diffs: unlisted });
            rows.push(
              `${verdict.toUpperCase().padEnd(11)} ${check}\n${unlisted.map((d) => `              ${d.path}: pi ${d.pi} / ours ${d.ours}`).join("\n")}`,
            );
          } else rows.push(`${verdict.padEnd(11)} ${check}`);
        }
      }
    }
    const total = Object.values(counts).reduce((x, y) => x + y, 0);
    process.stderr.write(
      `rpc-differential (pi 1.6.0): ${counts.same} same, ${counts.different} different, ${counts.missing} missing, ${counts.deliberate} deliberate, ${counts.open} open (of ${total} checks)\n${rows.join("\n")}\n`,
    );
    if (process.env.PI_DIFF_DUMP) {
      const { writeFileSync } = await import("node:fs");
      writeFileSync(
        process.env.PI_DIFF_DUMP,
        JSON.stringify(
          runs.map((r) => ({ pi: Object.fromEntries(r.piRecords), ours: Object.fromEntries(r.ourRecords) })),
          null,
          1,
        ),
      );
    }
    // Coverage: every command of pi 1.6.0 was sent, and every event of its stream was seen on pi's side.
    const sent = new Set(
      runs.flatMap((r) => [...r.piRecords.values()].flatMap((rec) => rec.responses.map((x) => String(x.command)))),
    );
    const seen = new Set(
      runs.flatMap((r) => [...r.piRecords.values()].flatMap((rec) => rec.events.map((e) => e.type))),
    );
    expect(upstreamCommands().filter((c) => !sent.has(c))).toEqual([]);
    expect(UPSTREAM_EVENTS.filter((e) => !seen.has(e))).toEqual([]);
    const stale = [...DELIBERATE, ...OPEN]
      .filter((d) => !used.has(`${d.step}|${d.path}`))
      .map((d) => `${d.step}: ${d.path}`);
    expect(unexpected).toEqual([]);
    expect(stale).toEqual([]);
  }, 240_000);
});
