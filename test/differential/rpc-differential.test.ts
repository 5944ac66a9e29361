/**
 * The differential suite: the same script against the upstream pi 0.73.1 and our
 * worker, each with the same mock model replies, compared key by key. The suite
 * fails on any difference that is not listed (with its reason) in deliberate.ts.
 */
import { existsSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { compareShapes, isDeliberate, type Difference } from "./compare.js";
import { DELIBERATE, OPEN } from "./deliberate.js";
import { runScript, startSide, UPSTREAM_CLI, type Side } from "./harness.js";
import { SCRIPT } from "./script.js";

const installed = existsSync(UPSTREAM_CLI);
const sides: Side[] = [];
afterAll(async () => {
  await Promise.all(sides.map((s) => s.cleanup()));
});

describe.skipIf(!installed)("RPC differential: upstream pi 0.73.1 and ours, same script, same mock model", () => {
  it("differs only where deliberate.ts says why", async () => {
    const [pi, ours] = await Promise.all([startSide("pi"), startSide("ours")]);
    sides.push(pi, ours);
    const [piRecords, ourRecords] = await Promise.all([runScript(pi, SCRIPT), runScript(ours, SCRIPT)]);

    let same = 0;
    let deliberate = 0;
    let open = 0;
    const unexpected: { check: string; diffs: Difference[] }[] = [];
    const rows: string[] = [];
    for (const step of SCRIPT) {
      const a = piRecords.get(step.name)!;
      const b = ourRecords.get(step.name)!;
      for (const part of ["responses", "events"] as const) {
        const check = `${step.name} / ${part}`;
        const diffs = compareShapes(a[part], b[part], part);
        if (diffs.length === 0) {
          same++;
          continue;
        }
        const unlisted = diffs.filter(
          (d) => !isDeliberate(DELIBERATE, step.name, d) && !isDeliberate(OPEN, step.name, d),
        );
        if (unlisted.length > 0) {
          unexpected.push({ check, diffs: unlisted });
          rows.push(
            `DIFFERENT   ${check}\n${unlisted.map((d) => `              ${d.path}: pi ${d.pi} / ours ${d.ours}`).join("\n")}`,
          );
        } else if (diffs.some((d) => isDeliberate(OPEN, step.name, d))) {
          open++;
          rows.push(`open        ${check}`);
        } else {
          deliberate++;
          rows.push(`deliberate  ${check}`);
        }
      }
    }
    process.stderr.write(
      `rpc-differential: ${same} same, ${open + unexpected.length} different (${open} listed as open, ${unexpected.length} unlisted), ${deliberate} deliberate (of ${SCRIPT.length * 2} checks)\n${rows.join("\n")}\n`,
    );
    if (process.env.PI_DIFF_DUMP) {
      const { writeFileSync } = await import("node:fs");
      writeFileSync(
        process.env.PI_DIFF_DUMP,
        JSON.stringify({ pi: Object.fromEntries(piRecords), ours: Object.fromEntries(ourRecords) }, null, 1),
      );
    }
    const used = new Set<string>();
    for (const step of SCRIPT) {
      for (const part of ["responses", "events"] as const) {
        const a = piRecords.get(step.name)!;
        const b = ourRecords.get(step.name)!;
        for (const d of compareShapes(a[part], b[part], part)) {
          const hit = isDeliberate(DELIBERATE, step.name, d) ?? isDeliberate(OPEN, step.name, d);
          if (hit) used.add(`${hit.step}|${hit.path}`);
        }
      }
    }
    const stale = [...DELIBERATE, ...OPEN]
      .filter((d) => !used.has(`${d.step}|${d.path}`))
      .map((d) => `${d.step}: ${d.path}`);
    expect(unexpected).toEqual([]);
    expect(stale).toEqual([]);
  }, 180_000);
});
