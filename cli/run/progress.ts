/**
 * Progress of a run while it goes. On a TTY, a table (task, status, turns, current
 * tool, elapsed) redrawn in place; elsewhere (CI logs, pipes) one line per status
 * change. The formatting is pure; the two printers write to a stream.
 */
import type { Colors } from "../context.js";
import { renderTable } from "../commands/format.js";
import { colorTaskStatus, formatDuration } from "./summary.js";
import { FINAL_STATUSES, type TaskProgress } from "./types.js";

/** Elapsed time of a task: running time so far, or its final duration. */
function elapsedOf(p: TaskProgress, now: number): string {
  if (p.startedAt === null) return "-";
  return formatDuration((p.endedAt ?? now) - p.startedAt);
}

/** The line printed when a task changes status (non-TTY). */
export function progressLine(p: TaskProgress, now: number, c: Colors): string {
  const final = FINAL_STATUSES.has(p.status);
  const detail = final && p.status !== "skipped" ? ` after ${elapsedOf(p, now)}` : "";
  const host = p.host && p.status !== "pending" ? ` on ${p.host}` : "";
  return `${c.bold(p.name)} ${colorTaskStatus(p.status, c)}${detail}${host}`;
}

/**
 * The live table. When there are more tasks than `maxRows`, running tasks come first
 * and the rest are summed up in a last line, so the table never scrolls the screen.
 */
export function progressTable(tasks: readonly TaskProgress[], now: number, c: Colors, maxRows = Infinity): string {
  const order = (p: TaskProgress) => (p.status === "pending" ? 2 : FINAL_STATUSES.has(p.status) ? 1 : 0);
  const shown =
    tasks.length > maxRows ? [...tasks].sort((a, b) => order(a) - order(b)).slice(0, Math.max(1, maxRows - 1)) : tasks;
  // Queue runs say which worker runs a task; local runs have no such column.
  const hosts = tasks.some((p) => p.host);
  const rows = shown.map((p) => [
    c.bold(p.name),
    colorTaskStatus(p.status, c),
    String(p.turns),
    p.tool ?? "-",
    elapsedOf(p, now),
    ...(hosts ? [p.host ?? "-"] : []),
  ]);
  const lines = [renderTable(["TASK", "STATUS", "TURNS", "TOOL", "ELAPSED", ...(hosts ? ["WORKER"] : [])], rows, c)];
  if (shown.length < tasks.length) {
    const done = tasks.filter((p) => FINAL_STATUSES.has(p.status)).length;
    const pending = tasks.filter((p) => p.status === "pending").length;
    lines.push(c.dim(`… ${tasks.length - shown.length} more (${done} done, ${pending} waiting in all)`));
  }
  return lines.join("\n");
}

/** Something that shows progress: told about every change, then stopped once. */
export interface ProgressPrinter {
  update(p: Readonly<TaskProgress>, statusChanged: boolean): void;
  stop(): void;
}

/** One line per status change. */
export function linePrinter(write: (line: string) => void, c: Colors): ProgressPrinter {
  return {
    update: (p, statusChanged) => {
      if (statusChanged && p.status !== "pending") write(progressLine(p, Date.now(), c));
    },
    stop: () => {},
  };
}

/** The in-place table on a TTY, redrawn on changes and every 250 ms for the clocks. */
export function livePrinter(stream: NodeJS.WriteStream, names: readonly string[], c: Colors): ProgressPrinter {
  const tasks = new Map<string, TaskProgress>(
    names.map((name) => [name, { name, status: "pending", turns: 0, tool: null, startedAt: null, endedAt: null }]),
  );
  let drawn = 0;
  let dirty = true;
  const draw = () => {
    if (!dirty && ![...tasks.values()].some((p) => p.startedAt !== null && p.endedAt === null)) return;
    dirty = false;
    const text = progressTable([...tasks.values()], Date.now(), c, Math.max(3, (stream.rows ?? 24) - 2));
    // Move to the start of the previous frame, clear to the end of the screen, draw.
    stream.write(`${(drawn > 0 ? `\x1b[${drawn}F\x1b[J` : "") + text}\n`);
    drawn = text.split("\n").length;
  };
  const timer = setInterval(draw, 250);
  timer.unref();
  draw();
  return {
    update: (p) => {
      tasks.set(p.name, { ...p });
      dirty = true;
    },
    stop: () => {
      clearInterval(timer);
      dirty = true;
      draw();
    },
  };
}
