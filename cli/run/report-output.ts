/**
 * The end of every command that has a run report (`run`, `run --queue`, `report merge`):
 * write `--report-json` and `--report-junit`, then print the JSON report (`--json`) or
 * the summary, so all of them look and exit alike.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { CliContext } from "../context.js";
import { junitXml } from "./junit.js";
import { summaryText } from "./summary.js";
import type { RunReport } from "./types.js";

/** Where a report goes. */
export interface ReportFlags {
  json?: boolean;
  reportJson?: string;
  reportJunit?: string;
}

function writeFile(path: string, text: string): void {
  const file = resolve(path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

/** Write the report files and print the report; returns its exit code. */
export function emitReport(ctx: CliContext, report: RunReport, flags: ReportFlags): number {
  if (flags.reportJson) writeFile(flags.reportJson, `${JSON.stringify(report, null, 2)}\n`);
  if (flags.reportJunit) writeFile(flags.reportJunit, junitXml(report));
  if (flags.json) ctx.json(report);
  else if (report.tasks.length > 0) {
    ctx.out();
    ctx.out(summaryText(report.tasks, report.durationMs, report.interrupted, ctx.color));
  }
  return report.exitCode;
}
