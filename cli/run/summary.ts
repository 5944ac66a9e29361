/**
 * The summary printed at the end of a run: one table row per task (status, turns,
 * tool calls, tokens, duration, changed files, check), then each task's final
 * assistant text, reason and session file, then the totals. Pure.
 */
import type { Colors } from "../context.js";
import { renderTable, shortPath } from "../commands/format.js";
import { countResults } from "./report.js";
import type { TaskResult, TaskStatus } from "./types.js";
import { formatCost, formatTokens } from "../../shared/usage.js";

/** Colour a task status: green passed, red failed or timed out, dim otherwise. */
export function colorTaskStatus(status: TaskStatus, c: Colors): string {
  const shown = status.replace("_", " ");
  if (status === "passed") return c.green(shown);
  if (status === "failed" || status === "timed_out") return c.red(shown);
  if (status === "running" || status === "checking") return c.cyan(shown);
  if (status === "starting") return c.yellow(shown);
  return c.dim(shown);
}

/** `850ms`, `12.3s`, `4m05s`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
}

/** `950`, `12.3k`, `4.1M`. */

/** One line of at most `max` characters (newlines folded into spaces). */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function checkCell(r: TaskResult, c: Colors): string {
  if (!r.check) return "-";
  if (r.check.passed) return c.green("ok");
  return c.red(r.check.exitCode !== null ? `exit ${r.check.exitCode}` : (r.check.signal ?? "failed"));
}

/** `3 tasks: 2 passed, 1 failed in 4.2s` */
export function totalsLine(results: readonly TaskResult[], durationMs: number, interrupted: boolean): string {
  const counts = countResults(results);
  const parts = (["passed", "failed", "timed_out", "cancelled", "skipped"] as const)
    .filter((k) => counts[k] > 0)
    .map((k) => `${counts[k]} ${k.replace("_", " ")}`);
  const tokens = results.reduce((n, r) => n + r.tokens.total, 0);
  const cost = results.reduce((n, r) => n + (r.tokens.cost ?? 0), 0);
  return `${counts.total} task${counts.total === 1 ? "" : "s"}: ${parts.join(", ")} in ${formatDuration(durationMs)}${interrupted ? " (interrupted)" : ""}; ${formatTokens(tokens)} tokens, ${formatCost(cost)}`;
}

/** The whole summary. */
export function summaryText(
  results: readonly TaskResult[],
  durationMs: number,
  interrupted: boolean,
  c: Colors,
): string {
  const rows = results.map((r) => [
    c.bold(r.name),
    colorTaskStatus(r.status, c),
    String(r.turns),
    String(r.toolCalls),
    formatTokens(r.tokens.total),
    formatCost(r.tokens.cost ?? 0),
    r.status === "skipped" ? "-" : formatDuration(r.durationMs),
    r.changedFiles === null ? "-" : String(r.changedFiles.length),
    checkCell(r, c),
  ]);
  const lines = [
    renderTable(["TASK", "STATUS", "TURNS", "TOOLS", "TOKENS", "COST", "TIME", "CHANGED", "CHECK"], rows, c),
    "",
  ];
  for (const r of results) {
    if (r.status === "skipped") continue;
    lines.push(`${c.bold(r.name)}  ${r.finalText ? oneLine(r.finalText, 200) : c.dim("(no assistant text)")}`);
    if (r.reason) lines.push(`  ${c.dim("reason")}   ${r.status === "passed" ? r.reason : c.red(r.reason)}`);
    if (r.changedFiles && r.changedFiles.length > 0)
      lines.push(`  ${c.dim("changed")}  ${oneLine(r.changedFiles.join(", "), 200)}`);
    if (r.worktree?.kept)
      lines.push(`  ${c.dim("worktree")} ${shortPath(r.worktree.path)} (branch ${r.worktree.branch})`);
    if (r.sessionFile) lines.push(`  ${c.dim("session")}  ${shortPath(r.sessionFile)}`);
    const retried = (r.attempts ?? 1) > 1 ? `retried: attempt ${r.attempts}` : "";
    if (r.host || retried)
      lines.push(
        `  ${c.dim("worker")}   ${[r.host, retried && (r.host ? `(${retried})` : retried)].filter(Boolean).join(" ")}`,
      );
  }
  const skipped = results.filter((r) => r.status === "skipped");
  if (skipped.length > 0) lines.push(c.dim(`not started: ${oneLine(skipped.map((r) => r.name).join(", "), 200)}`));
  lines.push("", totalsLine(results, durationMs, interrupted));
  return lines.join("\n");
}
