/**
 * `$PI_ORCH_HOME/agents.json`: the agents of this supervisor, so the next one finds
 * them. Written atomically (temp file, fsync, rename) so a crash mid-write leaves
 * either the old file or the new one, never half of either.
 */
import { readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { writeFileAtomic } from "../shared/atomic-write.js";
import { DAMAGED_REGISTRY_PREFIX, registryPath } from "../shared/paths.js";
import { AgentRecord, RUNNING_STATUSES, type AgentStatus } from "../shared/schema/agent.js";
import { checker } from "../shared/validate.js";
import { DEFAULT_RESTART_POLICY } from "./types.js";

interface RegistryFile {
  version: 1;
  savedAt: number;
  agents: AgentRecord[];
}

/** Write the registry atomically; the file is created 0600 because specs may hold env values. */
export function saveRegistry(home: string, agents: readonly AgentRecord[], now = Date.now()): void {
  const body: RegistryFile = { version: 1, savedAt: now, agents: [...agents] };
  writeFileAtomic(registryPath(home), `${JSON.stringify(body, null, 2)}\n`);
}

/** Result of loading: the agents and anything that had to be skipped or set aside. */
export interface LoadedRegistry {
  agents: AgentRecord[];
  warnings: string[];
  /** Agents that were in a run (busy or stalled) when the previous supervisor went away. */
  midRun?: string[];
}

const LIVE_OR_PENDING: ReadonlySet<AgentStatus> = new Set([...RUNNING_STATUSES, "stopping", "backoff", "unresponsive"]);

/**
 * Read the registry left by a previous supervisor. Its workers are gone (they exit
 * when their stdin closes), so agents that were live come back as `stopped` with
 * reason `supervisor exited`. A corrupt file is moved aside, not fatal.
 */
export function loadRegistry(home: string, now = Date.now()): LoadedRegistry {
  const path = registryPath(home);
  removeStaleTempFiles(path);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { agents: [], warnings: [] };
    throw err;
  }
  const warnings: string[] = [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    const aside = join(home, `${DAMAGED_REGISTRY_PREFIX}${now}`);
    renameSync(path, aside);
    const salvaged = salvageAgentRows(text);
    warnings.push(
      `${path} was not valid JSON (${(err as Error).message}); moved it to ${aside}; ` +
        (salvaged.rows.length === 0
          ? "no complete agent record could be read from it"
          : `kept the ${salvaged.rows.length} complete agent record(s) it holds` +
            (salvaged.complete ? "" : ", the rest is cut off or damaged")),
    );
    parsed = { agents: salvaged.rows };
  }
  const rows = (parsed as Partial<RegistryFile> | null)?.agents;
  if (!Array.isArray(rows)) return { agents: [], warnings: [`${path} has no "agents" array; ignored it`] };
  const agents: AgentRecord[] = [];
  const midRun: string[] = [];
  const check = checker(AgentRecord);
  for (const [i, row] of rows.entries()) {
    if (typeof row !== "object" || row === null || Array.isArray(row)) {
      warnings.push(`skipped entry ${i} of ${path}: not an object`);
      continue;
    }
    const checked = check(normalizeRecord(row as Partial<AgentRecord>));
    if (!checked.ok) {
      const name = typeof (row as { name?: unknown }).name === "string" ? ` ("${(row as { name: string }).name}")` : "";
      warnings.push(`skipped entry ${i}${name} of ${path}: ${checked.errors.join("; ")}`);
      continue;
    }
    const record = checked.value;
    if (record.status === "busy" || record.status === "stalled") midRun.push(record.name);
    if (LIVE_OR_PENDING.has(record.status)) {
      record.status = "stopped";
      record.statusReason = "supervisor exited";
      record.pid = null;
      record.lastExit = {
        code: null,
        signal: null,
        reason: "supervisor_exited",
        message: "the previous supervisor exited",
        at: now,
      };
    }
    agents.push(record);
  }
  return { agents, warnings, midRun };
}

/**
 * The complete agent records at the start of a damaged registry (a file cut short by a
 * full disk, a hand edit gone wrong): each object of the `agents` array that parses on
 * its own, in order, up to the first one that does not. `complete` when the array's end
 * was reached. Pure.
 */
export function salvageAgentRows(text: string): { rows: unknown[]; complete: boolean } {
  const key = /"agents"\s*:\s*\[/.exec(text);
  if (!key) return { rows: [], complete: false };
  const rows: unknown[] = [];
  let at = key.index + key[0].length;
  for (;;) {
    while (at < text.length && /[\s,]/.test(text[at]!)) at++;
    if (text[at] === "]") return { rows, complete: true };
    if (text[at] !== "{") return { rows, complete: false };
    const end = objectEnd(text, at);
    if (end === -1) return { rows, complete: false };
    try {
      rows.push(JSON.parse(text.slice(at, end)));
    } catch {
      return { rows, complete: false };
    }
    at = end;
  }
}

/** The index after the `}` that closes the object opening at `start`, or -1 when the text ends first. */
function objectEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/** A supervisor killed between writing its temp file and the rename leaves `agents.json.<pid>.tmp` behind. */
function removeStaleTempFiles(path: string): void {
  const prefix = `${basename(path)}.`;
  let names: string[];
  try {
    names = readdirSync(dirname(path));
  } catch {
    return;
  }
  for (const name of names) {
    if (name.startsWith(prefix) && name.endsWith(".tmp")) rmSync(join(dirname(path), name), { force: true });
  }
}

/** Fill fields an older or hand-edited file may lack; the schema check that follows decides the rest. */
function normalizeRecord(row: Partial<AgentRecord>): Partial<AgentRecord> {
  return {
    ...row,
    policy: { ...DEFAULT_RESTART_POLICY, ...(row.policy ?? {}) },
    onStall: row.onStall ?? "notify",
    limits: row.limits ?? {},
    createdAt: row.createdAt ?? Date.now(),
    status: row.status ?? "stopped",
    pid: row.pid ?? null,
    restarts: row.restarts ?? 0,
    lastExit: row.lastExit ?? null,
    sessionFile: row.sessionFile ?? null,
    lastSeenAt: row.lastSeenAt ?? null,
  };
}

/** How long after a refused registry write (a full disk) it is tried again. */
export const REGISTRY_RETRY_MS = 1_000;

/**
 * Coalescing writer: many status changes in a burst become one write of the latest
 * state. Writes are synchronous (small file), so `flush()` is exact on shutdown. A
 * write the disk refuses is reported once and tried again until it succeeds.
 */
export class RegistryWriter {
  private scheduled: NodeJS.Immediate | null = null;
  private retry: NodeJS.Timeout | null = null;
  private failing = false;

  constructor(
    private readonly home: string,
    private readonly snapshot: () => AgentRecord[],
    private readonly onError: (err: Error) => void = () => {},
  ) {}

  /** Ask for a write soon; repeated calls before it happens cost nothing. */
  markDirty(): void {
    if (this.scheduled) return;
    this.scheduled = setImmediate(() => {
      this.scheduled = null;
      this.write();
    });
  }

  /** Write now (cancels a pending write). */
  flush(): void {
    if (this.scheduled) {
      clearImmediate(this.scheduled);
      this.scheduled = null;
    }
    this.write();
  }

  private write(): void {
    try {
      saveRegistry(this.home, this.snapshot());
      this.failing = false;
      if (this.retry) {
        clearTimeout(this.retry);
        this.retry = null;
      }
    } catch (err) {
      if (!this.failing) this.onError(err as Error);
      this.failing = true;
      if (this.retry) return;
      this.retry = setTimeout(() => {
        this.retry = null;
        this.write();
      }, REGISTRY_RETRY_MS);
      this.retry.unref();
    }
  }
}
