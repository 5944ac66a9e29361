/**
 * `pi-orch report merge A.json B.json …`: one report from the JSON reports of the
 * shards of a CI matrix, with the summary, JUnit and exit code one run over the whole
 * list would have had. Exit 2 when a shard or task is missing or given twice.
 */
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { CliError, runAction, type CliContext } from "../context.js";
import type { SourcedReport } from "../run/report-merge.js";
import type { ReportFlags } from "../run/report-output.js";

interface MergeFlags extends ReportFlags {
  tasks?: string;
}

function readReport(path: string, parseReport: (text: string, path: string) => SourcedReport["report"]): SourcedReport {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new CliError(
      `cannot read the report ${path}: ${code === "ENOENT" ? "no such file (did that shard's job upload it?)" : (err as Error).message}`,
      2,
    );
  }
  return { source: path, report: parseReport(text, path) };
}

async function mergeCommand(ctx: CliContext, files: string[], flags: MergeFlags): Promise<number> {
  const [{ mergeReports, MergeError, parseReport }, { emitReport }, { loadTaskFile, TaskFileError }] =
    await Promise.all([import("../run/report-merge.js"), import("../run/report-output.js"), import("../run/tasks.js")]);
  try {
    const inputs = files.map((file) => readReport(file, parseReport));
    const names = flags.tasks === undefined ? undefined : (await loadTaskFile(flags.tasks)).map((t) => t.name);
    return emitReport(ctx, mergeReports(inputs, names), flags);
  } catch (err) {
    if (err instanceof MergeError || err instanceof TaskFileError) throw new CliError(err.message, 2);
    throw err;
  }
}

/** Register `report` and its subcommand `merge`. */
export function register(program: Command, ctx: CliContext): void {
  const report = program
    .command("report")
    .description("work with the JSON reports of pi-orch run")
    .addHelpText(
      "after",
      "\nExample:\n  pi-orch report merge reports/run-*.json --tasks tasks.json --report-junit junit.xml",
    );
  report
    .command("merge")
    .argument("<reports...>", "JSON reports (--report-json) of the shards of one run")
    .description("merge the reports of --shard runs into one, with the summary and exit code of one run over all tasks")
    .option("--tasks <file>", "the task file the shards ran: every task must be in the reports, in its order")
    .option("--json", "print the merged JSON report on stdout instead of the summary")
    .option("--report-json <file>", "write the merged JSON report to this file")
    .option("--report-junit <file>", "write a JUnit XML report (one test case per task) to this file")
    .addHelpText(
      "after",
      `
Tasks come back in the order of the list the shards were cut from; the time is from
the first shard's start to the last one's end. Give the report of every shard once:
a shard missing, a shard or task given twice, or a shard lacking tasks is an error
(exit 2) naming the files. Exit codes otherwise as pi-orch run: 0 every task passed,
1 a task failed, timed out or was skipped, 130 a shard was interrupted.

Examples:
  pi-orch report merge reports/run-*.json --report-junit junit.xml
  pi-orch report merge run-1.json run-2.json --tasks tasks.json --json > run.json`,
    )
    .action((files: string[], flags: MergeFlags) => runAction(ctx, () => mergeCommand(ctx, files, flags)));
}
