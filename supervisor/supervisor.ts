/**
 * The root of the supervision tree: owns the registry of agents, creates one actor
 * per agent, routes their events to subscribers, and tears everything down
 * together. This is the API the IPC server and the CLI build on.
 */
import { rmSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import type { RpcCommandEnvelope, RpcResponse } from "../shared/schema/rpc.js";
import { AgentActor } from "./agent-actor.js";
import { Mailbox } from "./mailbox.js";
import { OrchError } from "./errors.js";
import { agentLogPaths, logsDir } from "../shared/paths.js";
import { AgentEventLog, type DroppedEvents } from "./event-log.js";
import { withItemsWire } from "../shared/jsonl.js";
import { assertValidName, generateId, generateName, resolveAgentRef } from "./names.js";
import { DEFAULT_WORKER_NICE } from "./priority.js";
import { DEFAULT_FLOOD_LIMITS, type FloodLimits } from "./protocol-flood.js";
import { PublishBatch } from "./publish-batch.js";
import { defaultStartConcurrency, StartGate } from "./start-gate.js";
import { loadRegistry, RegistryWriter } from "./registry.js";
import { SubscriberHub, type SubscriberSink, type Subscription } from "./subscribers.js";
import {
  RUNNING_STATUSES,
  type AgentInfo,
  type AgentRecord,
  type AgentStatus,
  type RestartPolicy,
  type SpawnOptions,
  type WorktreeInfo,
} from "../shared/schema/agent.js";
import { DEFAULT_RESTART_POLICY, DEFAULT_TIMINGS, type AgentTimings } from "./types.js";
import { buildWorkerArgv, defaultWorkerCommand } from "./worker-command.js";
import { WorkerSnapshots } from "./worker-snapshot.js";
import { launcherSupport, WorkerLauncher } from "./worker-launcher.js";
import { KeyStore, withoutApiKey } from "./key-store.js";
import { parseSandboxMode, SANDBOX_DEFAULT_VAR, type SandboxMode, sandboxSupport } from "../shared/sandbox.js";
import type { CreatedWorktree, DeleteBranch } from "./worktrees.js";

/**
 * The worktree operations (git through execa, ~25 ms of CPU to load): loaded by the first
 * agent with a worktree, not by every supervisor's start.
 */
const worktreeOps = () => import("./worktrees.js");

/** Options of a supervisor; everything but `home` has a default. */
export interface SupervisorOptions {
  /** The pi-orch home (agents.json, logs/). */
  home: string;
  /** The sandbox of agents spawned without one (default: `PI_ORCH_SANDBOX`, else `on` where bwrap works). */
  sandbox?: SandboxMode;
  /** argv of the default worker (default: `node dist/cli/pi.js --mode rpc`). */
  defaultWorkerCommand?: string[];
  /** Presence, stall and teardown timings of every agent. */
  timings?: Partial<AgentTimings>;
  /** Restart policy defaults for new agents. */
  policy?: Partial<RestartPolicy>;
  /** Events kept in memory per agent (default 10,000). */
  ringSize?: number;
  /** Bytes of event JSON kept in memory per agent (default 1 MiB); older events replay from the log files. */
  ringBytes?: number;
  /** Size at which log files rotate (default 10 MB) and how many rotated files are kept (default 3). */
  logMaxBytes?: number;
  logKeepFiles?: number;
  /** Bytes of log lines per file kept in memory while the disk refuses writes (default 4 MiB); older ones are dropped and told to subscribers as a gap. */
  logBacklogBytes?: number;
  /** Longest accepted worker stdout line (default 8 MB). */
  maxLineBytes?: number;
  /** Bounds of a worker's non-JSON stdout lines: reported, summarised, restarted (default DEFAULT_FLOOD_LIMITS). */
  protocolFlood?: Partial<FloodLimits>;
  /** Messages a subscriber may fall behind before it is told it lagged (default 10,000). */
  subscriberBuffer?: number;
  /** Bytes of event JSON a subscriber may fall behind before it is told it lagged (default 16 MiB). */
  subscriberBufferBytes?: number;
  /** Problems that are not errors (a corrupt registry moved aside, a failed registry write). */
  onWarning?: (message: string) => void;
  /** Where agents' git worktrees go (default `<home>/worktrees`). */
  worktreesDir?: string;
  /** Nice of every worker, so agents yield the CPU to routing and clients (default 10; 0 turns it off). */
  workerNice?: number;
  /** Workers starting at once; more wait their turn as `starting` (default two per CPU, see start-gate.ts). */
  startConcurrency?: number;
}

/** What `subscribe` takes. */
export interface SupervisorSubscribeOptions {
  /** Names or id prefixes; absent or empty follows every agent, also ones spawned later. */
  agents?: string[];
  /** Replay held events with `seq > since` first. */
  since?: number;
  sink: SubscriberSink;
}

const STARTED: (s: AgentStatus) => boolean = (s) => s !== "starting";

/** What `remove` takes. */
export interface RemoveOptions {
  force?: boolean;
  deleteBranch?: DeleteBranch;
}

type Reply<T> = { resolve: (value: T) => void; reject: (err: unknown) => void };
type Spawned = { actor: AgentActor; reusedWorktree: boolean };

/**
 * The root supervisor's messages. Each is handled to completion before the next; work
 * that takes time (a worktree, a teardown) runs outside and posts its result back as
 * the `*_done` message, so every change of the agent table happens in the handler.
 */
type RootMessage =
  | { kind: "spawn"; opts: SpawnOptions; reply: Reply<Spawned> }
  | {
      kind: "spawn_done";
      name: string;
      opts: SpawnOptions;
      made: CreatedWorktree | null;
      error: unknown;
      reply: Reply<Spawned>;
    }
  | { kind: "stop"; ref: string | null; reply: Reply<AgentActor[]> }
  | { kind: "restart"; ref: string; watch: (actor: AgentActor) => void; reply: Reply<AgentActor> }
  | { kind: "remove"; ref: string; opts: RemoveOptions; reply: Reply<AgentInfo> }
  | { kind: "remove_done"; name: string; error: unknown; reply: Reply<AgentInfo> }
  | { kind: "shutdown"; reply: Reply<void> };

/**
 * The root supervisor. Create with `Supervisor.open`; end with `shutdown()`, which
 * stops every worker. Invariant: one supervisor per home at a time (the IPC server
 * enforces it through the socket).
 */
export class Supervisor {
  readonly home: string;
  readonly logsDir: string;
  readonly timings: AgentTimings;
  readonly worktreesDir: string;
  private readonly actors = new Map<string, AgentActor>();
  /** Names of agents whose spawn is creating a worktree (not yet in `actors`). */
  private readonly reserved = new Set<string>();
  private readonly logs = new Map<string, AgentEventLog>();
  private readonly hub: SubscriberHub;
  /** Events of the current turn: logged in one write per agent, then published. */
  private readonly batch: PublishBatch;
  private readonly registry: RegistryWriter;
  private readonly defaultCommand: string[];
  private readonly defaultPolicy: RestartPolicy;
  private shuttingDown: Promise<void> | null = null;
  private sandboxWarned = false;
  private readonly keyStore: KeyStore;
  private readonly startGate: StartGate;
  /** Starts every worker in one session apart from the supervisor's (null where it cannot: each gets its own). */
  private readonly launcher: WorkerLauncher | null;
  /** Our worker's startup snapshots (absent when the default worker is not our pi.cjs). */
  private readonly snapshots: WorkerSnapshots | undefined;
  /** Agents whose removal was accepted and is under way (stopping, removing the worktree). */
  private readonly removing = new Set<string>();
  private readonly mailbox = new Mailbox<RootMessage>(
    (m) => this.handle(m),
    (err, m) => m.reply.reject(err),
  );

  private constructor(private readonly opts: SupervisorOptions) {
    this.home = resolve(opts.home);
    this.logsDir = logsDir(this.home);
    this.worktreesDir = resolve(opts.worktreesDir ?? join(this.home, "worktrees"));
    this.timings = { ...DEFAULT_TIMINGS, ...opts.timings };
    this.defaultCommand = opts.defaultWorkerCommand ?? defaultWorkerCommand();
    const bin = this.defaultCommand[1];
    if (this.defaultCommand[0] === process.execPath && bin?.endsWith("pi.cjs"))
      this.snapshots = new WorkerSnapshots(bin, (m) => this.warn(m));
    this.defaultPolicy = { ...DEFAULT_RESTART_POLICY, ...opts.policy };
    this.keyStore = new KeyStore(this.home);
    this.startGate = new StartGate(opts.startConcurrency ?? defaultStartConcurrency());
    const launcher = launcherSupport();
    this.launcher = launcher.ok
      ? new WorkerLauncher(launcher.perl, opts.workerNice ?? DEFAULT_WORKER_NICE, (m) => this.warn(m))
      : null;
    this.hub = new SubscriberHub((agent, since) => this.logs.get(agent)?.since(since));
    this.batch = new PublishBatch(this.hub);
    this.registry = new RegistryWriter(
      this.home,
      () => [...this.actors.values()].map((a) => a.toRecord()),
      (err) => this.warn(`could not write ${join(this.home, "agents.json")}: ${err.message}`),
    );
  }

  /** Open the supervisor of `home`, loading the agents a previous supervisor left (as `stopped`). */
  static open(opts: SupervisorOptions): Supervisor {
    const sup = new Supervisor(opts);
    const loaded = loadRegistry(sup.home);
    for (const w of loaded.warnings) sup.warn(w);
    for (const record of loaded.agents) {
      const actor = sup.addActor(record);
      // Its worker saw stdin close and exited mid-run; without this the log just stops.
      if (loaded.midRun?.includes(record.name)) actor.noteInterrupted("the supervisor exited during the run");
    }
    if (loaded.agents.length > 0) sup.registry.flush();
    return sup;
  }

  /** Start a new agent. Rejects with `exists`/`invalid` before anything is started. */
  async spawn(opts: SpawnOptions = {}): Promise<AgentInfo> {
    const { actor, reusedWorktree } = await this.ask<Spawned>((reply) => ({ kind: "spawn", opts, reply }));
    // Whoever hears of the agent can count on the next supervisor finding it.
    const recorded = this.registry.durable();
    if (opts.wait === false && opts.prompt === undefined) {
      await recorded;
      return this.settled(actor.info());
    }
    // Timed from its spawn: the wait for a start slot behind a fleet is not the worker's.
    const [status] = await Promise.all([
      actor.startSlot().then(() => actor.waitFor(STARTED, this.timings.startTimeoutMs + 5_000)),
      recorded,
    ]);
    if (opts.prompt !== undefined) {
      if (!RUNNING_STATUSES.has(status)) throw actor.notRunningError();
      const response = await actor.rpc({ type: "prompt", message: opts.prompt });
      if (!response.success) {
        // A first prompt refused (no API key, a bad model) is a configuration error: nothing stays behind.
        const worktree = actor.toRecord().worktree;
        await this.remove(actor.name, { force: true, deleteBranch: !!(worktree && !reusedWorktree) }).catch(
          () => undefined,
        );
        throw new OrchError(
          "invalid",
          `agent "${actor.name}" refused its first prompt, so it was removed again: ${response.error}`,
        );
      }
    }
    return this.settled(actor.info());
  }

  /** Every agent, in creation order; the list carries its JSON, made from each entry's own (see `withItemsWire`). */
  list(): AgentInfo[] {
    return withItemsWire([...this.actors.values()].map((a) => a.info()).sort((a, b) => a.createdAt - b.createdAt));
  }

  /** One agent by name or unique id prefix. */
  status(ref: string): AgentInfo {
    return this.resolve(ref).info();
  }

  /** The agent's log file paths. */
  logPaths(ref: string): { events: string; stderr: string } {
    return agentLogPaths(this.logsDir, this.resolve(ref).name);
  }

  /** Stop one agent gracefully; resolves when its process group is gone. */
  async stop(ref: string): Promise<AgentInfo> {
    const [actor] = await this.ask<AgentActor[]>((reply) => ({ kind: "stop", ref, reply }));
    await this.registry.durable();
    return actor.info();
  }

  /** Stop every agent in parallel. */
  async stopAll(): Promise<AgentInfo[]> {
    await this.ask<AgentActor[]>((reply) => ({ kind: "stop", ref: null, reply }));
    await this.registry.durable();
    return this.list();
  }

  /**
   * Restart an agent by hand (also from `failed` or `stopped`), resuming its session.
   * The restart history starts over; resolves once the new worker left `starting`
   * unless `wait` is false. Refused while the agent is being removed.
   */
  async restart(ref: string, opts: { wait?: boolean } = {}): Promise<AgentInfo> {
    let leftStarting: Promise<void> | undefined;
    const actor = await this.ask<AgentActor>((reply) => ({
      kind: "restart",
      ref,
      reply,
      // Registered before the restart is posted to the actor, so the `starting` it passes through is seen.
      watch: (a) => {
        // Wait for "starting" first so an agent that is idle now is not mistaken for restarted.
        leftStarting = a
          .waitFor((s) => s === "starting", this.timings.stopGraceMs + this.timings.killGraceMs + 5_000)
          .then(() => a.startSlot())
          .then(() => a.waitFor(STARTED, this.timings.startTimeoutMs + 5_000))
          .then(() => undefined);
      },
    }));
    if (opts.wait !== false) await leftStarting;
    else leftStarting?.catch(() => {});
    return this.settled(actor.info());
  }

  /** Restart every agent the previous supervisor left running (`serve --resume`). */
  async resumeAll(): Promise<AgentInfo[]> {
    const toResume = [...this.actors.values()].filter(
      (a) => a.status === "stopped" && a.toRecord().statusReason === "supervisor exited",
    );
    return Promise.all(toResume.map((a) => this.restart(a.name)));
  }

  /**
   * Forget an agent (its log files stay) and remove its worktree. A running agent, or a
   * worktree with uncommitted changes, needs `force`: it stops the agent first and
   * discards the changes. The worktree's branch stays unless `deleteBranch` says otherwise.
   * From the moment it is accepted the agent is `removing`: a restart is refused, so no
   * new worker can start for an agent that is going away.
   */
  async remove(ref: string, opts: RemoveOptions = {}): Promise<AgentInfo> {
    const info = await this.ask<AgentInfo>((reply) => ({ kind: "remove", ref, opts, reply }));
    await this.registry.durable();
    return info;
  }

  /**
   * Forward one pi protocol command to an agent's worker and return the worker's own
   * response. The command is not checked here: the worker checks it, so a worker
   * newer than our schema (the upstream pi) gets the commands it knows.
   */
  async rpc(ref: string, command: RpcCommandEnvelope, opts: { timeoutMs?: number } = {}): Promise<RpcResponse> {
    const actor = this.resolve(ref);
    return this.settled(await actor.rpc(command, opts.timeoutMs));
  }

  /** Follow agents' events (see `SupervisorSubscribeOptions`); close the returned subscription to stop. */
  subscribe(opts: SupervisorSubscribeOptions): Subscription {
    const names = opts.agents && opts.agents.length > 0 ? new Set(opts.agents.map((r) => this.resolve(r).name)) : null;
    // Events of this turn go out first, so the replay and the live stream meet with no gap or duplicate.
    this.batch.flush();
    return this.hub.subscribe(
      {
        agents: names,
        since: opts.since,
        sink: opts.sink,
        maxBuffered: this.opts.subscriberBuffer,
        maxBufferedBytes: this.opts.subscriberBufferBytes,
      },
      [...this.actors.keys()],
    );
  }

  /**
   * Stop every agent in parallel, persist the registry and close the logs. Agents
   * that were live are recorded as stopped with reason `supervisor exited`, so the
   * next supervisor can resume them. Idempotent.
   */
  shutdown(): Promise<void> {
    return this.ask<void>((reply) => ({ kind: "shutdown", reply }));
  }

  /** During shutdown, skip the grace periods: SIGKILL every worker group now (a second signal). */
  async killAll(): Promise<void> {
    await Promise.all([...this.actors.values()].map((a) => a.kill()));
    this.registry.flush();
  }

  // ---- the root actor: message handling (only ever called by the mailbox) ----

  /** Post a message and wait for its reply. */
  private ask<T>(message: (reply: Reply<T>) => RootMessage): Promise<T> {
    return new Promise<T>((resolve, reject) => this.mailbox.post(message({ resolve, reject }))).finally(() =>
      this.batch.flush(),
    );
  }

  /** `value`, once the events so far are published: a caller that gets an answer has its subscribers' events before it. */
  private settled<T>(value: T): T {
    this.batch.flush();
    return value;
  }

  private handle(m: RootMessage): void {
    switch (m.kind) {
      case "spawn":
        return this.onSpawn(m.opts, m.reply);
      case "spawn_done":
        return this.onSpawnDone(m);
      case "stop": {
        const actors = m.ref === null ? [...this.actors.values()] : [this.resolve(m.ref)];
        Promise.all(actors.map((a) => a.stop())).then(() => m.reply.resolve(actors), m.reply.reject);
        return;
      }
      case "restart": {
        this.assertOpen();
        const actor = this.resolve(m.ref);
        if (this.removing.has(actor.name)) {
          throw new OrchError("busy", `agent "${actor.name}" is being removed; spawn a new agent instead`);
        }
        m.watch(actor);
        actor.restart();
        m.reply.resolve(actor);
        return;
      }
      case "remove":
        return this.onRemove(m.ref, m.opts, m.reply);
      case "remove_done":
        return this.onRemoveDone(m);
      case "shutdown":
        this.shuttingDown ??= (async () => {
          const live = [...this.actors.values()].filter((a) => a.status !== "stopped" && a.status !== "failed");
          await Promise.all(live.map((a) => a.stop("supervisor exited")));
          this.registry.flush();
          this.batch.flush();
          this.hub.closeAll();
          for (const log of this.logs.values()) log.close();
          await this.launcher?.close();
        })();
        this.shuttingDown.then(() => m.reply.resolve(), m.reply.reject);
        return;
    }
  }

  private onSpawn(opts: SpawnOptions, reply: Reply<Spawned>): void {
    this.assertOpen();
    const name = opts.name ?? generateName(new Set([...this.actors.keys(), ...this.reserved]));
    assertValidName(name);
    if (this.reserved.has(name))
      throw new OrchError("exists", `an agent named "${name}" is being spawned right now; pick another --name`);
    const existing = this.actors.get(name);
    if (existing) {
      throw new OrchError(
        "exists",
        `an agent named "${name}" already exists (status: ${existing.describeStatus()}); use pi-orch restart ${name}, or pick another --name`,
      );
    }
    const cwd = resolve(opts.cwd ?? process.cwd());
    if (!isDirectory(cwd))
      throw new OrchError(
        "invalid",
        `working directory ${cwd} does not exist or is not a folder; pass an existing --cwd`,
      );
    if (opts.workerCommand && opts.workerCommand.length === 0)
      throw new OrchError("invalid", "the worker command is empty");
    // A key that could only reach the worker in argv is refused here, not at its first start.
    buildWorkerArgv(opts, null, this.defaultCommand);
    opts = { ...opts, sandbox: this.sandboxFor(opts.sandbox) };
    if (!opts.worktree) return reply.resolve({ actor: this.createAgent(name, cwd, opts), reusedWorktree: false });
    this.reserved.add(name);
    const worktree = opts.worktree;
    worktreeOps()
      .then((git) => git.createWorktree({ ...worktree, worktreesDir: this.worktreesDir, cwd, name }))
      .then(
        (made) => this.mailbox.post({ kind: "spawn_done", name, opts, made, error: null, reply }),
        (error: unknown) => this.mailbox.post({ kind: "spawn_done", name, opts, made: null, error, reply }),
      );
  }

  private onSpawnDone(m: Extract<RootMessage, { kind: "spawn_done" }>): void {
    this.reserved.delete(m.name);
    if (!m.made) throw m.error;
    const made = m.made;
    if (this.shuttingDown) {
      // A worktree an earlier run left is the user's to keep; only a new one goes.
      const cleanup = made.reused
        ? Promise.resolve()
        : worktreeOps().then((git) => git.removeWorktree(made.worktree, { force: true, deleteBranch: true }));
      void cleanup
        .catch(() => undefined)
        .then(() =>
          m.reply.reject(
            new OrchError("shutting_down", "the supervisor is shutting down; start a new one with pi-orch serve"),
          ),
        );
      return;
    }
    m.reply.resolve({ actor: this.createAgent(m.name, made.cwd, m.opts, made.worktree), reusedWorktree: made.reused });
  }

  private createAgent(name: string, cwd: string, opts: SpawnOptions, worktree?: WorktreeInfo): AgentActor {
    const id = generateId();
    // An `--api-key` goes to keys.json; agents.json records the command line without it.
    const keyEnv = buildWorkerArgv(opts, null, this.defaultCommand).env;
    if (Object.keys(keyEnv).length > 0) {
      this.keyStore.set(id, keyEnv);
      opts = { ...opts, extraArgs: withoutApiKey(opts.extraArgs), workerCommand: withoutApiKey(opts.workerCommand) };
    }
    const record: AgentRecord = {
      name,
      id,
      cwd,
      provider: opts.provider,
      model: opts.model,
      policy: { ...this.defaultPolicy, ...opts.policy, restart: opts.restart ?? this.defaultPolicy.restart },
      workerCommand: opts.workerCommand,
      extraArgs: opts.extraArgs,
      ...(opts.packages?.length ? { packages: opts.packages } : {}),
      env: opts.env,
      onStall: opts.onStall ?? "notify",
      limits: opts.limits ?? {},
      ...(worktree ? { worktree } : {}),
      ...(opts.sandbox && opts.sandbox !== "off" ? { sandbox: opts.sandbox } : {}),
      ...(opts.sandboxWrite?.length ? { sandboxWrite: opts.sandboxWrite.map((p) => resolve(cwd, p)) } : {}),
      createdAt: Date.now(),
      status: "stopped",
      pid: null,
      restarts: 0,
      lastExit: null,
      sessionFile: null,
      lastSeenAt: null,
    };
    const actor = this.addActor(record);
    actor.start();
    this.registry.markDirty();
    return actor;
  }

  private onRemove(ref: string, opts: RemoveOptions, reply: Reply<AgentInfo>): void {
    const actor = this.resolve(ref);
    const name = actor.name;
    if (this.removing.has(name)) throw new OrchError("busy", `agent "${name}" is already being removed`);
    const running = actor.status !== "stopped" && actor.status !== "failed";
    if (running && !opts.force) {
      throw new OrchError(
        "busy",
        `agent "${name}" is ${actor.status}; stop it first (pi-orch stop ${name}) or remove it with --force`,
      );
    }
    this.removing.add(name);
    const worktree = actor.toRecord().worktree;
    const work = async () => {
      const git = worktree ? await worktreeOps() : null;
      if (worktree && git && !opts.force && (await git.worktreeDirty(worktree))) {
        throw new OrchError(
          "busy",
          `agent "${name}" has uncommitted changes in its worktree ${worktree.path}; see them with pi-orch diff ${name}, ` +
            `commit them there to keep them on branch ${worktree.branch}, or remove it with --force to discard them`,
        );
      }
      // Stopped whatever its status now: a restart accepted before the removal may have started a worker.
      await actor.stop();
      if (worktree && git) await git.removeWorktree(worktree, { force: opts.force, deleteBranch: opts.deleteBranch });
    };
    work().then(
      () => this.mailbox.post({ kind: "remove_done", name, error: null, reply }),
      (error: unknown) =>
        this.mailbox.post({ kind: "remove_done", name, error: error ?? new Error("remove failed"), reply }),
    );
  }

  private onRemoveDone(m: Extract<RootMessage, { kind: "remove_done" }>): void {
    this.removing.delete(m.name);
    if (m.error !== null) throw m.error;
    const actor = this.actors.get(m.name)!;
    const info = actor.info();
    actor.removed();
    this.actors.delete(m.name);
    this.batch.flush();
    this.logs.get(m.name)?.close();
    this.logs.delete(m.name);
    this.registry.markDirty();
    // Its sandbox's keyless key files (supervisor/keyless-files.ts) go with it.
    rmSync(join(this.home, "sandbox", info.id), { recursive: true, force: true });
    try {
      this.keyStore.set(info.id, {});
    } catch (err) {
      this.warn(
        `could not forget agent "${m.name}"'s key in ${join(this.home, "keys.json")}: ${(err as Error).message}`,
      );
    }
    m.reply.resolve(info);
  }

  private addActor(record: AgentRecord): AgentActor {
    const log = new AgentEventLog({
      logsDir: this.logsDir,
      name: record.name,
      ringSize: this.opts.ringSize,
      ringBytes: this.opts.ringBytes,
      maxFileBytes: this.opts.logMaxBytes,
      keepFiles: this.opts.logKeepFiles,
      backlogBytes: this.opts.logBacklogBytes,
      // Lines are written per turn by the publish batch, before it publishes them.
      batched: true,
      onWritten: () => this.batch.wake(record.name, log),
      onProblem: (problem, dropped) => {
        actor.noteDiskProblem(problem);
        if (problem)
          this.warn(`agent "${record.name}": ${problem}; events wait in memory and are written when space returns`);
        else
          this.warn(
            `agent "${record.name}": its event log is written again${dropped.events > 0 ? ` (${droppedNote(dropped)})` : ""}`,
          );
      },
    });
    const actor: AgentActor = new AgentActor({
      record,
      timings: this.timings,
      defaultCommand: this.defaultCommand,
      log,
      publish: (entry, raw) => this.batch.add(record.name, log, entry, raw),
      onChange: () => this.registry.markDirty(),
      maxLineBytes: this.opts.maxLineBytes,
      protocolFlood: { ...DEFAULT_FLOOD_LIMITS, ...this.opts.protocolFlood },
      workerNice: this.opts.workerNice ?? DEFAULT_WORKER_NICE,
      // Our worker keeps its sessions under the same home as the supervisor that runs it.
      baseEnv: { PI_ORCH_HOME: this.home },
      home: this.home,
      keys: () => this.keyStore.get(record.id),
      startGate: this.startGate,
      snapshotArgs: (env, args) => this.snapshots?.argsFor(env, args) ?? [],
      launcher: this.launcher,
    });
    this.logs.set(record.name, log);
    this.actors.set(record.name, actor);
    return actor;
  }

  /**
   * The sandbox of a new agent: the one asked for, else the supervisor's default
   * (`PI_ORCH_SANDBOX`), else `on` where bwrap works and `off`, said once in the log,
   * where it does not. A sandbox asked for that cannot run is refused, with why.
   */
  private sandboxFor(asked: SandboxMode | undefined): SandboxMode {
    const wanted = asked ?? this.opts.sandbox ?? parseSandboxMode(process.env[SANDBOX_DEFAULT_VAR]);
    if (wanted === "off") return "off";
    const support = sandboxSupport();
    if (support.ok) return wanted ?? "on";
    if (wanted)
      throw new OrchError("invalid", `--sandbox ${wanted} cannot run: ${support.reason}; or spawn with --sandbox off`);
    if (!this.sandboxWarned) {
      this.sandboxWarned = true;
      this.warn(`agents run without a sandbox: ${support.reason}`);
    }
    return "off";
  }

  private resolve(ref: string): AgentActor {
    return resolveAgentRef(this.actors.values(), ref);
  }

  private assertOpen(): void {
    if (this.shuttingDown)
      throw new OrchError("shutting_down", "the supervisor is shutting down; start a new one with pi-orch serve");
  }

  private warn(message: string): void {
    this.opts.onWarning?.(message);
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** What a full disk's backlog dropped from an agent's log, for the warning when it is written again. */
function droppedNote(dropped: DroppedEvents): string {
  const others = dropped.events - dropped.streaming - dropped.boundaries;
  const kinds = [
    dropped.streaming > 0 ? `${dropped.streaming} streaming updates` : "",
    others > 0 ? `${others} other events` : "",
    dropped.boundaries > 0 ? `${dropped.boundaries} run boundaries or supervisor events` : "",
  ].filter(Boolean);
  return `${dropped.events} events that did not fit the backlog are missing from it: ${kinds.join(", ")}`;
}
