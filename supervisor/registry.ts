/**
 * `$PI_ORCH_HOME/agents.json`: the agents of this supervisor, so the next one finds
 * them. Written atomically (temp file, fsync, rename) so a crash mid-write leaves
 * either the old file or the new one, never half of either.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { open } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { writeFileAtomic } from "../shared/atomic-write.js";
import { jsonBytesOfFrozen } from "../shared/jsonl.js";
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
  writeFileAtomic(registryPath(home), registryText(agents, now));
}

/**
 * The file's text: one agent per line. A thousand agents indented would be 1.5 MB
 * written on every burst of changes; one line each is half of it, and still reads (and
 * salvages) by line. A frozen record's line is made once (jsonBytesOfFrozen): a fleet
 * starting writes the file five times a second while each agent changes a few times in
 * all. Pure.
 */
function registryText(agents: readonly AgentRecord[], now: number): Buffer {
  const head: Omit<RegistryFile, "agents"> = { version: 1, savedAt: now };
  if (agents.length === 0) return Buffer.from(`${JSON.stringify({ ...head, agents: [] })}\n`);
  const chunks: Buffer[] = [Buffer.from(`${JSON.stringify(head).slice(0, -1)},"agents":[\n`)];
  for (let i = 0; i < agents.length; i++) {
    if (i > 0) chunks.push(ROW_SEPARATOR);
    chunks.push(jsonBytesOfFrozen(agents[i]!));
  }
  chunks.push(END);
  return Buffer.concat(chunks);
}

const ROW_SEPARATOR = Buffer.from(",\n");
const END = Buffer.from("\n]}\n");

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

/** Least time between two registry writes: changes in between go out together in the second. */
export const REGISTRY_MIN_INTERVAL_MS = 200;

/**
 * Coalescing writer: the changes of a burst (a fleet starting: a pid, `starting`, `idle`
 * for each agent) become one write of the latest state, at most one every
 * `REGISTRY_MIN_INTERVAL_MS`. The file is written and fsynced off the supervisor's
 * thread; only the rename is here, so a `flush` (synchronous, for shutdown) always has
 * the last word. `durable()` tells when what was known at the call is on disk. A write
 * the disk refuses is reported once and tried again until it succeeds.
 */
export class RegistryWriter {
  private timer: NodeJS.Timeout | null = null;
  private failing = false;
  /** Changes not yet in a write under way. */
  private dirty = false;
  private writing: Promise<void> | null = null;
  private lastWriteAt = Number.NEGATIVE_INFINITY;
  /** Bumped by every write that begins, so an older one under way does not rename over a newer file. */
  private generation = 0;
  private tmpCount = 0;
  /** Waiting for the next write to begin and end (they asked while changes were pending). */
  private nextWaiters: (() => void)[] = [];
  /** Waiting for the write under way. */
  private currentWaiters: (() => void)[] = [];

  constructor(
    private readonly home: string,
    private readonly snapshot: () => AgentRecord[],
    private readonly onError: (err: Error) => void = () => {},
  ) {}

  /** Ask for a write soon; repeated calls before it happens cost nothing. */
  markDirty(): void {
    this.dirty = true;
    this.schedule(REGISTRY_MIN_INTERVAL_MS - (performance.now() - this.lastWriteAt));
  }

  /** Resolves once every change marked before the call is on disk (or its write failed and was reported). */
  durable(): Promise<void> {
    if (this.dirty) return new Promise((r) => this.nextWaiters.push(r));
    if (this.writing) return new Promise((r) => this.currentWaiters.push(r));
    return Promise.resolve();
  }

  /** Write now, synchronously (cancels a pending write; one under way is superseded). */
  flush(): void {
    this.cancelTimer();
    this.dirty = false;
    const gen = ++this.generation;
    const waiters = this.nextWaiters.splice(0);
    try {
      saveRegistry(this.home, this.snapshot());
      this.succeeded();
    } catch (err) {
      this.failed(err as Error, gen);
    }
    for (const w of waiters) w();
  }

  private schedule(inMs: number): void {
    if (this.timer || this.writing) return; // the write under way schedules the next one when it ends
    this.timer = setTimeout(
      () => {
        this.timer = null;
        void this.writeInBackground();
      },
      Math.max(0, inMs),
    );
  }

  private cancelTimer(): void {
    if (!this.timer) return;
    clearTimeout(this.timer);
    this.timer = null;
  }

  private async writeInBackground(): Promise<void> {
    if (!this.dirty) return;
    this.dirty = false;
    const gen = ++this.generation;
    this.currentWaiters = this.nextWaiters.splice(0);
    const path = registryPath(this.home);
    const text = registryText(this.snapshot(), Date.now());
    const tmp = `${path}.${process.pid}.${++this.tmpCount}.tmp`;
    let done!: () => void;
    this.writing = new Promise((r) => (done = r));
    try {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      const file = await open(tmp, "w", 0o600);
      try {
        await file.writeFile(text, "utf8");
        await file.sync();
      } finally {
        await file.close();
      }
      // Checked and renamed in one turn of this thread: a newer write (a flush) is never undone.
      if (gen !== this.generation) rmSync(tmp, { force: true });
      else {
        renameSync(tmp, path);
        await syncFolder(dirname(path));
        this.succeeded();
      }
    } catch (err) {
      rmSync(tmp, { force: true });
      this.failed(err as Error, gen);
    } finally {
      this.lastWriteAt = performance.now();
      this.writing = null;
      for (const w of this.currentWaiters.splice(0)) w();
      done();
      if (this.dirty) this.schedule(REGISTRY_MIN_INTERVAL_MS);
    }
  }

  private succeeded(): void {
    this.failing = false;
  }

  private failed(err: Error, gen: number): void {
    if (!this.failing) this.onError(err);
    this.failing = true;
    // Tried again after a while, unless something newer was written meanwhile.
    setTimeout(() => {
      if (gen !== this.generation) return;
      this.dirty = true;
      this.schedule(0);
    }, REGISTRY_RETRY_MS).unref();
  }
}

/** fsync a folder, so a rename in it is on disk; some filesystems refuse, and the file itself is synced already. */
async function syncFolder(dir: string): Promise<void> {
  try {
    const handle = await open(dir, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // not supported here
  }
}
