/**
 * Formatting shared by the `pi-orch` commands: the agent table, coloured statuses,
 * relative times and short paths. Pure functions; the commands print the results.
 */
import { homedir } from "node:os";
import type { AgentInfo, AgentStatus } from "../../shared/schema/agent.js";
import type { Colors } from "../context.js";
import { formatCost, formatTokens, sumUsage } from "../../shared/usage.js";
import { activityCounts, activityLabel, type Activity } from "../../shared/activity.js";

/** Colour a status the way every command shows it: green live, yellow in between, red broken. */
export function colorStatus(status: AgentStatus, c: Colors): string {
  switch (status) {
    case "idle":
      return c.green(status);
    case "busy":
      return c.cyan(status);
    case "starting":
    case "stopping":
    case "backoff":
    case "stalled":
      return c.yellow(status);
    case "unresponsive":
    case "failed":
      return c.red(status);
    case "stopped":
      return c.dim(status);
  }
}

/** A person's state of an agent, coloured: what needs you red or yellow, work cyan, done green. */
export function colorActivity(activity: Activity | undefined, c: Colors): string {
  if (!activity) return "-";
  const label = activityLabel(activity.state);
  switch (activity.state) {
    case "waiting":
      return c.yellow(label);
    case "failed":
      return c.red(label);
    case "working":
      return c.cyan(label);
    case "done":
      return c.green(label);
    default:
      return c.dim(label);
  }
}

/** `3s ago`, `4m ago`, `2h ago`, `5d ago`; `-` for never. */
export function ago(at: number | null | undefined, now = Date.now()): string {
  if (!at) return "-";
  const s = Math.max(0, Math.round((now - at) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86_400)}d ago`;
}

/** A path with the home folder shown as `~`. */
export function shortPath(path: string, home = homedir()): string {
  return home && (path === home || path.startsWith(`${home}/`)) ? `~${path.slice(home.length)}` : path;
}

/** `provider/model`, either part, or `-`. */
export function modelOf(a: Pick<AgentInfo, "provider" | "model">): string {
  if (a.provider && a.model) return a.model.includes("/") ? a.model : `${a.provider}/${a.model}`;
  return a.model ?? a.provider ?? "-";
}

/** Visible width of a string (ANSI colour codes do not count). */
export function visibleWidth(s: string): number {
  // eslint-disable-next-line no-control-regex
  return s.replace(/\x1b\[[0-9;]*m/g, "").length;
}

/** Left-aligned columns separated by two spaces; the header is dimmed. */
export function renderTable(header: string[], rows: string[][], c: Colors): string {
  const widths = header.map((h, i) => Math.max(visibleWidth(h), ...rows.map((r) => visibleWidth(r[i] ?? ""))));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell + " ".repeat(widths[i] - visibleWidth(cell))))
      .join("  ")
      .trimEnd();
  return [c.dim(line(header)), ...rows.map(line)].join("\n");
}

/** `pi-orch/fix-a (3 changed)`: a worktree agent's branch and how many files differ from its base. */
export function worktreeCell(a: AgentInfo, changed: number | null | undefined): string {
  if (!a.worktree) return shortPath(a.cwd);
  const count = changed === undefined ? "" : changed === null ? " (worktree missing)" : ` (${changed} changed)`;
  return `${a.worktree.branch}${count}`;
}

/**
 * The `list` table: name, status, state (for a person), pid, restarts, model, tokens, cost, cwd, last seen. For
 * agents in a worktree the cwd column shows the branch and, given `changes`, the
 * changed-file count.
 */
export function agentTable(
  agents: readonly AgentInfo[],
  c: Colors,
  now = Date.now(),
  changes?: ReadonlyMap<string, number | null>,
): string {
  const rows = agents.map((a) => [
    c.bold(a.name),
    colorStatus(a.status, c),
    colorActivity(a.activity, c),
    a.pid === null ? "-" : String(a.pid),
    String(a.restarts),
    modelOf(a),
    a.usage ? formatTokens(a.usage.total) : "-",
    a.usage ? formatCost(a.usage.cost) : "-",
    worktreeCell(a, changes?.get(a.name)),
    ago(a.lastSeenAt, now),
  ]);
  const where = agents.some((a) => a.worktree) ? "CWD / BRANCH" : "CWD";
  return renderTable(
    ["NAME", "STATUS", "STATE", "PID", "RESTARTS", "MODEL", "TOKENS", "COST", where, "LAST SEEN"],
    rows,
    c,
  );
}

/** `fleet: 3 agents, 12.4k tokens (9.1k in, 3.3k out), $0.42`: the line under the `list` table. */
export function fleetLine(agents: readonly Pick<AgentInfo, "usage" | "activity">[]): string {
  const u = sumUsage(agents.map((a) => a.usage));
  const states = activityCounts(agents.flatMap((a) => (a.activity ? [a.activity.state] : [])));
  return `fleet: ${agents.length} agent${agents.length === 1 ? "" : "s"}${states ? ` (${states})` : ""}, ${formatTokens(u.total)} tokens (${formatTokens(u.input)} in, ${formatTokens(u.output)} out${u.cacheRead > 0 ? `, ${formatTokens(u.cacheRead)} cached` : ""}), ${formatCost(u.cost)}`;
}

/** `on`, `strict (also writes /a, /b)` or `off`: an agent's sandbox as `status` shows it (absent is off). */
function sandboxOf(a: Pick<AgentInfo, "sandbox" | "sandboxWrite">): string {
  const mode = a.sandbox ?? "off";
  if (mode === "off") return "off";
  return a.sandboxWrite?.length ? `${mode} (also writes ${a.sandboxWrite.join(", ")})` : mode;
}

/** The `status` view: one field per line. */
export function agentDetails(a: AgentInfo, c: Colors, now = Date.now()): string {
  const exit = a.lastExit
    ? `${a.lastExit.reason}${a.lastExit.code !== null ? ` code ${a.lastExit.code}` : ""}${a.lastExit.signal ? ` signal ${a.lastExit.signal}` : ""}` +
      `${a.lastExit.message ? ` (${a.lastExit.message})` : ""}, ${ago(a.lastExit.at, now)}`
    : "-";
  const limits = [
    a.limits.maxMemoryMb !== undefined ? `memory ${a.limits.maxMemoryMb} MB` : null,
    a.limits.maxTokens !== undefined ? `tokens ${a.limits.maxTokens}` : null,
    a.limits.runTimeoutMs !== undefined ? `run ${a.limits.runTimeoutMs / 1000}s` : null,
  ].filter(Boolean);
  const p = a.policy;
  const fields: [string, string][] = [
    ["name", c.bold(a.name)],
    ["id", a.id],
    ["status", colorStatus(a.status, c) + (a.statusReason ? ` (${a.statusReason})` : "")],
    ["state", colorActivity(a.activity, c) + (a.activity?.message ? `: ${a.activity.message}` : "")],
    ["pid", a.pid === null ? "-" : String(a.pid)],
    ["restarts", String(a.restarts)],
    ["model", modelOf(a)],
    [
      "usage",
      a.usage
        ? `${formatTokens(a.usage.total)} tokens (${formatTokens(a.usage.input)} in, ${formatTokens(a.usage.output)} out, ${formatTokens(a.usage.cacheRead)} cache read, ${formatTokens(a.usage.cacheWrite)} cache write), ${formatCost(a.usage.cost)}`
        : "-",
    ],
    ["cwd", a.cwd],
    ...(a.worktree
      ? ([["worktree", `${a.worktree.path} (branch ${a.worktree.branch} from ${a.worktree.base.slice(0, 12)})`]] as [
          string,
          string,
        ][])
      : []),
    ["worker", a.workerCommand ? a.workerCommand.join(" ") : "pi --mode rpc (built in)"],
    ["sandbox", sandboxOf(a)],
    [
      "restart policy",
      `${p.restart}, backoff ${p.backoffInitialMs} ms doubling to ${p.backoffMaxMs / 1000}s, at most ${p.intensity} in ${p.periodMs / 1000}s`,
    ],
    ["on stall", a.onStall],
    ["limits", limits.length > 0 ? limits.join(", ") : "-"],
    ["session", a.sessionFile ?? "-"],
    ["last exit", exit],
    ["last seen", ago(a.lastSeenAt, now)],
    ["events", String(a.lastSeq)],
    ["created", new Date(a.createdAt).toISOString()],
  ];
  const width = Math.max(...fields.map(([k]) => k.length));
  return fields.map(([k, v]) => `${c.dim(k.padEnd(width))}  ${v}`).join("\n");
}
