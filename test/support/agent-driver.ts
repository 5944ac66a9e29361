/**
 * Drives the agent table (supervisor/agent-machine.ts) as its shell would, without
 * processes: messages in, effects out, timers kept and fired at their time.
 */
import { expect } from "vitest";
import { transition } from "../../supervisor/agent-machine.js";
import {
  initialState,
  type AgentEffect,
  type AgentMessage,
  type AgentState,
  type MachineConfig,
} from "../../supervisor/agent-state.js";
import { DEFAULT_FLOOD_LIMITS } from "../../supervisor/protocol-flood.js";
import type { AgentRecord } from "../../shared/schema/agent.js";

export const T0 = 1_000_000;
export const config: MachineConfig = {
  timings: {
    pingIntervalMs: 100,
    pingDeadlineMs: 200,
    startTimeoutMs: 500,
    stallTimeoutMs: 1_000,
    stopGraceMs: 50,
    killGraceMs: 50,
    rpcTimeoutMs: 300,
  },
  defaultCommand: ["pi", "--mode", "rpc"],
  workerNice: 10,
  protocolFlood: DEFAULT_FLOOD_LIMITS,
};

export function record(over: Partial<AgentRecord> = {}): AgentRecord {
  return {
    name: "a",
    id: "id-a",
    cwd: "/tmp",
    policy: {
      restart: "transient",
      backoffInitialMs: 20,
      backoffMaxMs: 200,
      resetAfterMs: 60_000,
      intensity: 3,
      periodMs: 10_000,
    },
    onStall: "notify",
    limits: {},
    createdAt: T0,
    status: "stopped",
    pid: null,
    restarts: 0,
    lastExit: null,
    sessionFile: null,
    lastSeenAt: null,
    ...over,
  };
}

/** Freeze what a transition is given, so any change to it in place throws. */
function frozen(state: AgentState): AgentState {
  Object.freeze(state.record);
  return Object.freeze(state);
}

/** Drives the table like the shell, but by hand: the test says what happens next. */
export class Driver {
  state: AgentState;
  effects: AgentEffect[] = [];
  /** The timers running now, as the shell would hold them. */
  readonly timers = new Map<string, Extract<AgentEffect, { kind: "timer" }>>();
  now = T0;

  constructor(rec: AgentRecord = record()) {
    this.state = initialState(rec);
  }

  send(message: AgentMessage): AgentEffect[] {
    const { state, effects } = transition(config, frozen(this.state), message, this.now);
    this.state = state;
    this.effects = effects;
    for (const e of effects) {
      if (e.kind === "timer") this.timers.set(e.key, e);
      else if (e.kind === "cancel_timer") this.timers.delete(e.key);
    }
    return effects;
  }

  get status(): string {
    return this.state.record.status;
  }

  get gen(): number {
    return this.state.gen;
  }

  of<K extends AgentEffect["kind"]>(kind: K): Extract<AgentEffect, { kind: K }>[] {
    return this.effects.filter((e): e is Extract<AgentEffect, { kind: K }> => e.kind === kind);
  }

  /** Event types emitted (or forwarded as their text) by the last step. */
  emitted(): unknown[] {
    return this.effects.flatMap((e) => (e.kind === "emit" ? [e.event.type] : e.kind === "forward" ? [e.type] : []));
  }

  statuses(): unknown[] {
    return this.of("emit")
      .filter((e) => e.event.type === "agent_status")
      .map((e) => e.event.status);
  }

  timer(key: string): Extract<AgentEffect, { kind: "timer" }> {
    const t = this.timers.get(key);
    if (!t) throw new Error(`no ${key} timer runs (running: ${[...this.timers.keys()].join(", ")})`);
    return t;
  }

  /** Start, spawn as pid, answer the probe: the agent is idle. */
  toIdle(pid = 100): void {
    this.send({ kind: "start" });
    this.spawned(pid);
    this.answerProbe();
  }

  spawned(pid: number | undefined = 100): void {
    const spawn = this.of("spawn")[0];
    expect(spawn, "a spawn effect").toBeDefined();
    this.send({ kind: "spawned", gen: spawn.gen, pid, startedAt: this.now });
  }

  answerProbe(data: Record<string, unknown> = { sessionFile: "/s/a.jsonl", isStreaming: false }): void {
    const probe = this.of("send")[0].value as { id: string; type: string };
    expect(probe.type).toBe("get_state");
    this.line({ type: "response", id: probe.id, command: "get_state", success: true, data });
  }

  line(value: unknown): AgentEffect[] {
    return this.send({ kind: "line", gen: this.gen, line: JSON.stringify(value) });
  }

  exit(code: number | null, signal: string | null = null): AgentEffect[] {
    return this.send({ kind: "exit", gen: this.gen, code, signal, spawnError: null, stderrTail: "" });
  }

  /** A timer fires: its message is sent at its time. */
  fire(key: string): AgentEffect[] {
    const t = this.timer(key);
    this.timers.delete(key);
    this.now += t.ms;
    return this.send(t.message);
  }
}
