/**
 * `pi-orch report merge`: one report from the JSON reports of static shards (a CI
 * matrix), as if one run had gone over the whole list: tasks back in list order,
 * counts and exit code recomputed, the time span from the first start to the last end.
 * A shard given twice, a task in two reports, a shard or task missing: each is an
 * error naming the files, because a merged report that silently lacks work would
 * turn a CI job green that should not be. Pure: the caller reads the files.
 */
import { checker } from "../../shared/validate.js";
import { buildReport } from "./report.js";
import { RunReportSchema } from "./report-schema.js";
import type { RunReport, TaskResult } from "./types.js";

/** A report that cannot be merged; the CLI exits 2 with the message. */
export class MergeError extends Error {}

/** A parsed report and where it came from (shown in errors). */
export interface SourcedReport {
  source: string;
  report: RunReport;
}

/** Parse and check one JSON report; throws `MergeError` naming the file and field. */
export function parseReport(text: string, source: string): RunReport {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new MergeError(`${source}: not valid JSON (${(err as Error).message}); give the file --report-json wrote`);
  }
  const result = checker(RunReportSchema)(value);
  if (!result.ok) throw new MergeError(`${source}: not a pi-orch run report (${result.errors.slice(0, 3).join("; ")})`);
  return result.value as RunReport;
}

/** Tasks shard `index` of `total` holds in a list of `listed` (task k goes to shard k mod total + 1). */
export function shardSize(listed: number, index: number, total: number): number {
  return listed < index ? 0 : Math.floor((listed - index) / total) + 1;
}

function checkDuplicates(inputs: readonly SourcedReport[]): void {
  const seen = new Map<string, string>();
  for (const { source, report } of inputs) {
    for (const task of report.tasks) {
      const before = seen.get(task.name);
      if (before !== undefined) {
        throw new MergeError(
          before === source
            ? `${source}: task "${task.name}" is in it twice`
            : `task "${task.name}" is in both ${before} and ${source}; give each shard's report once`,
        );
      }
      seen.set(task.name, source);
    }
  }
}

/** Tasks of sharded reports, back in the order of the list they were sliced from. */
function interleave(inputs: readonly SourcedReport[]): TaskResult[] {
  const total = inputs[0].report.shard!.total;
  const byIndex = new Map<number, SourcedReport>();
  for (const input of inputs) {
    const shard = input.report.shard!;
    if (shard.total !== total) {
      throw new MergeError(
        `${inputs[0].source} is shard ${inputs[0].report.shard!.index}/${total} but ${input.source} is shard ${shard.index}/${shard.total}; merge the shards of one matrix`,
      );
    }
    const before = byIndex.get(shard.index);
    if (before)
      throw new MergeError(`shard ${shard.index}/${total} is given twice (${before.source} and ${input.source})`);
    byIndex.set(shard.index, input);
  }
  const missing = Array.from({ length: total }, (_, i) => i + 1).filter((i) => !byIndex.has(i));
  if (missing.length > 0) {
    throw new MergeError(
      `missing the report of shard${missing.length > 1 ? "s" : ""} ${missing.map((i) => `${i}/${total}`).join(", ")}; its tasks would be missing from the merged report`,
    );
  }
  const listedValues = new Set(inputs.map((i) => i.report.listed).filter((n) => n !== undefined));
  if (listedValues.size > 1)
    throw new MergeError(
      `the reports come from task lists of different lengths (${[...listedValues].join(", ")}); merge the shards of one run`,
    );
  const listed =
    listedValues.size === 1 ? [...listedValues][0]! : inputs.reduce((n, i) => n + i.report.tasks.length, 0);
  for (const [index, { source, report }] of byIndex) {
    const want = shardSize(listed, index, total);
    if (report.tasks.length !== want) {
      throw new MergeError(
        `${source} (shard ${index}/${total}) has ${report.tasks.length} task${report.tasks.length === 1 ? "" : "s"}, but shard ${index}/${total} of a list of ${listed} has ${want}; ` +
          (report.tasks.length < want ? "tasks are missing from it" : "it holds tasks of another list"),
      );
    }
  }
  const out: TaskResult[] = new Array(listed);
  for (const [index, { report }] of byIndex) report.tasks.forEach((task, j) => (out[j * total + index - 1] = task));
  return out;
}

/**
 * Merge reports into one. `listNames`, when given (the task file), is the list every
 * task must come from: a name missing from the reports, or one not in the list, is an error,
 * and the merged tasks follow its order.
 */
export function mergeReports(inputs: readonly SourcedReport[], listNames?: readonly string[]): RunReport {
  if (inputs.length === 0)
    throw new MergeError("no reports to merge; give the JSON reports of the shards (--report-json of each)");
  const sources = inputs.map((i) => i.source);
  const again = sources.find((s, k) => sources.indexOf(s) !== k);
  if (again !== undefined) throw new MergeError(`${again} is given twice; give each shard's report once`);
  checkDuplicates(inputs);
  const sharded = inputs.filter((i) => i.report.shard !== null);
  if (sharded.length > 0 && sharded.length < inputs.length) {
    const whole = inputs.find((i) => i.report.shard === null)!;
    throw new MergeError(
      `${whole.source} is a whole run but ${sharded[0].source} is a shard; merge either the shards of one matrix or whole runs`,
    );
  }
  let tasks: TaskResult[];
  if (sharded.length > 0) tasks = interleave(inputs);
  else {
    for (const { source, report } of inputs) {
      if (report.listed !== undefined && report.listed !== report.tasks.length) {
        throw new MergeError(
          `${source} lists ${report.listed} tasks but holds ${report.tasks.length}; tasks are missing from it`,
        );
      }
    }
    tasks = inputs.flatMap((i) => i.report.tasks);
  }
  if (listNames) {
    const have = new Map(tasks.map((t) => [t.name, t]));
    const missing = listNames.filter((n) => !have.has(n));
    if (missing.length > 0)
      throw new MergeError(
        `the reports lack ${missing.length} task${missing.length > 1 ? "s" : ""} of the list: ${missing.slice(0, 10).join(", ")}${missing.length > 10 ? ", …" : ""}`,
      );
    const listed = new Set(listNames);
    const extra = tasks.filter((t) => !listed.has(t.name)).map((t) => t.name);
    if (extra.length > 0)
      throw new MergeError(
        `the reports hold task${extra.length > 1 ? "s" : ""} the list does not have: ${extra.slice(0, 10).join(", ")}${extra.length > 10 ? ", …" : ""}`,
      );
    tasks = listNames.map((n) => have.get(n)!);
  }
  const starts = inputs.map((i) => Date.parse(i.report.startedAt));
  if (starts.some((t) => Number.isNaN(t)))
    throw new MergeError(`${inputs[starts.findIndex((t) => Number.isNaN(t))].source}: "startedAt" is not a date`);
  const startedAt = Math.min(...starts);
  const endedAt = Math.max(...inputs.map((i, k) => starts[k] + i.report.durationMs));
  const interrupted = inputs.some((i) => i.report.interrupted);
  return buildReport({
    results: tasks,
    startedAt,
    durationMs: endedAt - startedAt,
    interrupted,
    shard: null,
    listed: tasks.length,
  });
}
