/**
 * A string format an extension registers with typebox, and a tool whose parameters use it,
 * on our worker and on upstream pi 1.6.0 as the oracle. pi 1.6.0 checks a tool's arguments
 * with pi-schema and JSON Schema's own formats (a fixed set), not typebox's format registry,
 * and its modules for extensions (typebox, typebox/compile, typebox/value) reach no registry:
 * an extension registers a format in a typebox of its own, which no worker check reads. So
 * the worker leaves a format it does not know unchecked (the tool runs) and checks a standard
 * one (`email`), in pi as in ours; only the extension's own checks see its format. Skipped
 * when test/upstream is not installed.
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import { transcriptOf } from "../support/oracle-transcript.js";
import { UPSTREAM } from "../support/upstream-oracle.js";

const { server, dirs, dir } = useOracleFixture();

// The registry by its file: pi 1.6.0 maps `typebox` (and `typebox/compile`, `typebox/value`)
// to its own, and its alias turns `typebox/format` into a path inside that module's file.
const EXTENSION = `
import { Type } from "typebox";
import { Format } from "./node_modules/typebox/build/format/index.mjs";
Format.Set("even-length", (value) => value.length % 2 === 0);
export default function (pi) {
  pi.registerTool({
    name: "word",
    label: "word",
    description: "takes a word of even length, and a mail address",
    parameters: Type.Object({ word: Type.String({ format: "even-length" }), mail: Type.Optional(Type.String({ format: "email" })) }),
    execute: async (_id, params) => ({
      content: [{ type: "text", text: "ran with " + params.word + "; the extension's own registry: " + Format.Test("even-length", params.word) }],
    }),
  });
}
`;

describe.skipIf(!UPSTREAM["1.6.0"].installed)(
  "a typebox format an extension registers: our worker and upstream",
  () => {
    it("leaves the extension's own format unchecked and checks a standard one, as pi 1.6.0 does", async () => {
      const folder = dir("typebox-format-");
      mkdirSync(join(folder, "node_modules"));
      symlinkSync(resolve(import.meta.dirname, "../../node_modules/typebox"), join(folder, "node_modules/typebox"));
      const extension = join(folder, "formats.ts");
      writeFileSync(extension, EXTENSION);
      const results: Record<string, unknown[]> = {};
      for (const impl of ["ours", "upstream"] as const) {
        const t = await transcriptOf(impl, server, dirs, { pi: "1.6.0", args: ["-e", extension] }, async (s) => {
          await s.run(
            "call word",
            {
              toolCalls: [
                { id: "c1", name: "word", arguments: { word: "odd" } },
                { id: "c2", name: "word", arguments: { word: "even", mail: "not a mail address" } },
              ],
            },
            { text: "done" },
          );
        });
        results[impl] = (t.lines as { type: string; isError?: boolean; result?: { content?: { text: string }[] } }[])
          .filter((l) => l.type === "tool_execution_end")
          .map((l) => ({ isError: l.isError, text: l.result?.content?.[0]?.text }));
      }
      expect(results.ours).toEqual(results.upstream);
      expect(results.upstream).toContainEqual({
        isError: false,
        text: "ran with odd; the extension's own registry: false",
      });
      expect(results.upstream).toContainEqual({
        isError: true,
        text: expect.stringContaining('Validation failed for tool "word":\n  - mail: expected format email\n'),
      });
    }, 120_000);
  },
);
