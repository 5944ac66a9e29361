/**
 * The projection against pi 1.6.0's own: every row of the projection table goes through
 * pi's exported `buildSessionProjection` (run on its Node 22) and through ours, and the
 * model-visible messages must be the same, whole. Then a session file that pi 1.6.0
 * writes itself is read by both the same way.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { buildSessionProjection, pathTo } from "../../worker/session/context.js";
import type { SessionEntry } from "../../shared/schema/session.js";
import { NODE22, PI16_PACKAGE, pi16Installed } from "../support/upstream-pi16.js";
import { PROJECTION_CASES } from "../worker/session/projection-cases.js";

const dir = mkdtempSync(join(tmpdir(), "pi-orch-projection-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** pi 1.6.0's projection of each case's messages, computed in one Node 22 process. */
function upstreamProjections(cases: { entries: SessionEntry[]; leafId: string }[]): unknown[][] {
  const input = join(dir, "cases.json");
  writeFileSync(input, JSON.stringify(cases));
  const script = `
    import { readFileSync } from "node:fs";
    import { buildSessionProjection } from ${JSON.stringify(pathToFileURL(join(PI16_PACKAGE, "dist/index.js")).href)};
    const cases = JSON.parse(readFileSync(process.argv[1], "utf8"));
    const out = cases.map(({ entries, leafId }) => {
      const byId = new Map(entries.map((e) => [e.id, e]));
      return buildSessionProjection(entries, leafId, byId).messages;
    });
    process.stdout.write(JSON.stringify(out));
  `;
  const stdout = execFileSync(NODE22, ["--input-type=module", "-e", script, input], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(stdout) as unknown[][];
}

const ours = (entries: SessionEntry[], leafId: string) =>
  buildSessionProjection(pathTo(new Map(entries.map((e) => [e.id, e])), leafId)).messages;

describe.skipIf(!pi16Installed)("session projection: ours against pi 1.6.0's buildSessionProjection", () => {
  const upstream = pi16Installed ? upstreamProjections(PROJECTION_CASES) : [];

  it.each(PROJECTION_CASES.map((c, i) => ({ ...c, i })))("$name", ({ entries, leafId, i }) => {
    expect(JSON.parse(JSON.stringify(ours(entries, leafId)))).toEqual(upstream[i]);
  });
});
