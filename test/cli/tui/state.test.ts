import { describe, expect, it } from "vitest";
import {
  initialState,
  MAX_LINES,
  queuedLine,
  reduce,
  sameForInk,
  visibleAgents,
  type InkDrawn,
  type TuiAction,
  type TuiState,
} from "../../../cli/tui/state.js";
import { tailLines, wrapText } from "../../../cli/tui/text.js";
import { info } from "./helpers.js";
import type { AgentStatus } from "../../../shared/schema/agent.js";

function fold(actions: TuiAction[], state: TuiState = initialState(0)): TuiState {
  return actions.reduce(reduce, state);
}
const delta = (agent: string, seq: number, text: string): TuiAction => ({
  type: "event",
  agent,
  seq,
  event: { type: "message_update", assistantMessageEvent: { type: "text_delta", delta: text } },
});

describe("the TUI reducer", () => {
  it("joins streamed deltas into lines and keeps the unfinished one open", () => {
    const s = fold([delta("a", 1, "hello "), delta("a", 2, "world\nsecond"), delta("a", 3, " line")]);
    expect(s.agents.a!.lines).toEqual([{ kind: "text", text: "hello world" }]);
    expect(s.agents.a!.open).toEqual({ kind: "text", text: "second line" });
    const ended = reduce(s, { type: "event", agent: "a", seq: 4, event: { type: "agent_end", messages: [] } });
    expect(ended.agents.a!.lines.map((l) => l.text)).toEqual(["hello world", "second line"]);
    expect(ended.agents.a!.open).toBeNull();
  });

  it("shows queued steers and follow-ups under the transcript until delivered, and drops them with the worker", () => {
    const queue = (seq: number, steering: string[], followUp: string[]): TuiAction => ({
      type: "event",
      agent: "a",
      seq,
      event: { type: "queue_update", steering, followUp },
    });
    const s = fold([delta("a", 1, "working on it"), queue(2, ["go left"], ["then right", "and\nup"])]);
    expect(queuedLine(s.agents.a!)).toEqual({
      kind: "notice",
      text: "⏳ 3 queued · steer: go left · follow-up: then right · follow-up: and up",
    });
    expect(
      tailLines(s.agents.a!.lines, s.agents.a!.open, 80, 5, { last: queuedLine(s.agents.a!) }).map((l) => l.text),
    ).toEqual(["working on it", "⏳ 3 queued · steer: go left · follow-up: then right · follow-up: and up"]);
    expect(queuedLine(fold([queue(3, [], ["then right", "and up"])], s).agents.a!)?.text).toBe(
      "⏳ 2 queued · follow-up: then right · follow-up: and up",
    );
    expect(queuedLine(fold([queue(3, [], [])], s).agents.a!)).toBeNull();
    const exited = fold(
      [{ type: "event", agent: "a", seq: 3, event: { type: "worker_exited", reason: "crash", code: 1, signal: null } }],
      s,
    );
    expect(queuedLine(exited.agents.a!)).toBeNull();
  });

  it("ignores events it has already seen (a replay after reconnecting)", () => {
    const s = fold([delta("a", 1, "one "), delta("a", 2, "two ")]);
    expect(fold([delta("a", 1, "one "), delta("a", 2, "two ")], s)).toBe(s);
  });

  it("forgets seen sequence numbers when a new supervisor lists fewer", () => {
    const s = fold([{ type: "agents", agents: [info("a")] }, delta("a", 40, "x")]);
    const again = fold(
      [{ type: "agents", agents: [info("a", "idle", { lastSeq: 2 })], reconnected: true }, delta("a", 3, "y")],
      s,
    );
    expect(again.agents.a!.open?.text).toBe("xy");
  });

  it("says nothing fell behind when a restarted supervisor replays less than the view already showed", () => {
    const s = fold([{ type: "agents", agents: [info("a")] }, delta("a", 285, "seen")]);
    const after = fold(
      [
        { type: "agents", agents: [info("a", "idle", { lastSeq: 290 })], reconnected: true },
        { type: "lagged", agent: "a", from: 1, to: 285 },
      ],
      s,
    );
    expect(after.agents.a!.lines).toEqual(s.agents.a!.lines);
    // A fresh view is told the older events are in the log, not that it fell behind.
    const fresh = fold([
      { type: "agents", agents: [info("b", "idle", { lastSeq: 9 })] },
      { type: "lagged", agent: "b", from: 1, to: 7 },
    ]);
    expect(fresh.agents.b!.lines.at(-1)!.text).toBe(
      "… skipped events 1-7 (not held in memory; pi-orch logs b has them)",
    );
    // Past what the view holds it did fall behind, from its own last event on.
    const behind = reduce(after, { type: "lagged", agent: "a", from: 280, to: 300 });
    expect(behind.agents.a!.lines.at(-1)!.text).toBe("… skipped events 286-300 (this view fell behind)");
    // Events dropped before the disk had them are lost, whoever looks.
    const lost = reduce(behind, { type: "lagged", agent: "a", from: 301, to: 305, reason: "not_logged" });
    expect(lost.agents.a!.lines.at(-1)!.text).toBe(
      "… skipped events 301-305 (lost while the disk was full; no log has them)",
    );
  });

  it("keeps a status newer than a list snapshot that arrives late", () => {
    const s = fold([
      { type: "agents", agents: [info("a", "starting", { lastSeq: 1 })] },
      {
        type: "event",
        agent: "a",
        seq: 2,
        event: { type: "agent_status", status: "busy", previous: "idle", restarts: 0, pid: 1 },
      },
      { type: "agents", agents: [info("a", "starting", { lastSeq: 1 })] },
    ]);
    expect(s.agents.a!.status).toBe("busy");
    expect(fold([{ type: "agents", agents: [info("a", "idle", { lastSeq: 3 })] }], s).agents.a!.status).toBe("idle");
  });

  it("shows a running tool's output as it comes (its last 5 lines), replaced by the result when it ends", () => {
    const ev = (seq: number, event: Record<string, unknown>): TuiAction =>
      ({ type: "event", agent: "a", seq, event }) as TuiAction;
    const output = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n");
    const update = (seq: number, text: string) =>
      ev(seq, {
        type: "tool_execution_update",
        toolCallId: "t",
        toolName: "bash",
        args: {},
        partialResult: { content: [{ type: "text", text }] },
      });
    const start = ev(1, { type: "tool_execution_start", toolCallId: "t", toolName: "bash", args: { command: "x" } });
    const running = fold([{ type: "agents", agents: [info("a")] }, start, update(2, output(2)), update(3, output(8))]);
    expect(running.agents.a!.open).toEqual({
      kind: "result",
      text: "line 4\nline 5\nline 6\nline 7\nline 8",
      live: true,
    });
    const ended = reduce(
      running,
      ev(4, {
        type: "tool_execution_end",
        toolCallId: "t",
        toolName: "bash",
        result: { content: [{ type: "text", text: "all done" }] },
        isError: false,
      }),
    );
    expect(ended.agents.a!.open).toBeNull();
    expect(ended.agents.a!.lines.at(-1)).toEqual({ kind: "result", text: "all done" });
    expect(ended.agents.a!.lines.some((l) => l.text.includes("line 8"))).toBe(false);
  });

  it("tracks the running tool, the status, restarts and tokens", () => {
    const s = fold([
      { type: "agents", agents: [info("a")] },
      {
        type: "event",
        agent: "a",
        seq: 1,
        at: 5,
        event: { type: "tool_execution_start", toolCallId: "t", toolName: "read", args: { path: "src/x.ts" } },
      },
      {
        type: "event",
        agent: "a",
        seq: 2,
        event: { type: "agent_status", status: "backoff", previous: "idle", restarts: 2, pid: null },
      },
    ]);
    expect(s.agents.a!.tools).toEqual([{ id: "t", name: "read", summary: "src/x.ts", startedAt: 5 }]);
    expect(s.agents.a).toMatchObject({ status: "backoff", restarts: 2 });
    const done = fold(
      [
        {
          type: "event",
          agent: "a",
          seq: 3,
          event: {
            type: "tool_execution_end",
            toolCallId: "t",
            toolName: "read",
            result: { content: [] },
            isError: false,
          },
        },
        {
          type: "event",
          agent: "a",
          seq: 4,
          event: {
            type: "message_end",
            message: { role: "assistant", usage: { totalTokens: 70 }, stopReason: "stop" },
          },
        },
        {
          type: "event",
          agent: "a",
          seq: 5,
          event: {
            type: "message_end",
            message: { role: "assistant", usage: { totalTokens: 30 }, stopReason: "stop" },
          },
        },
      ],
      s,
    );
    expect(done.agents.a!.tools).toEqual([]);
    expect(done.agents.a!.tokens).toBe(100);
  });

  it("hides agents that were already stopped when first listed, but keeps ones stopped later", () => {
    const s = fold([{ type: "agents", agents: [info("old", "stopped"), info("live", "busy")] }]);
    expect(visibleAgents(s).map((a) => a.name)).toEqual(["live"]);
    const later = fold(
      [
        {
          type: "event",
          agent: "live",
          seq: 1,
          event: { type: "agent_status", status: "stopped", previous: "busy", restarts: 0, pid: null },
        },
      ],
      s,
    );
    expect(visibleAgents(later).map((a) => a.status)).toEqual(["stopped"]);
    const gone = fold([{ type: "agents", agents: [info("old", "stopped")] }], later);
    expect(visibleAgents(gone)).toEqual([]);
  });

  it("keeps the listed status over the replayed history it already counts (a supervisor killed mid-run)", () => {
    // The new supervisor lists the agent stopped; the log it replays ends with the agent going busy.
    const replay: TuiAction[] = [
      {
        type: "event",
        agent: "k1",
        seq: 3,
        event: { type: "agent_status", status: "idle", previous: "starting", restarts: 0, pid: 1 },
      },
      {
        type: "event",
        agent: "k1",
        seq: 4,
        event: { type: "agent_status", status: "busy", previous: "idle", restarts: 0, pid: 1 },
      },
    ];
    const s = fold([
      { type: "agents", agents: [info("k1", "stopped", { lastSeq: 5, statusReason: "supervisor exited" })] },
      ...replay,
    ]);
    expect(s.agents.k1!.status).toBe("stopped");
    expect(s.agents.k1!.statusReason).toBe("supervisor exited");
    expect(visibleAgents(s)).toEqual([]);
    // What happens after the list is live again.
    const restarted = reduce(s, {
      type: "event",
      agent: "k1",
      seq: 6,
      event: { type: "agent_status", status: "starting", previous: "stopped", restarts: 0, pid: null },
    });
    expect(visibleAgents(restarted).map((a) => [a.name, a.status])).toEqual([["k1", "starting"]]);
    // A live agent's replayed history does not hide or freeze it either.
    const live = fold([
      { type: "agents", agents: [info("a", "idle", { lastSeq: 2 })] },
      {
        type: "event",
        agent: "a",
        seq: 2,
        event: { type: "agent_status", status: "busy", previous: "idle", restarts: 0, pid: 1 },
      },
    ]);
    expect(live.agents.a!.status).toBe("idle");
    expect(visibleAgents(live).map((a) => a.name)).toEqual(["a"]);
  });

  it("queues extension dialogs until they are answered", () => {
    const s = fold([
      {
        type: "event",
        agent: "a",
        seq: 1,
        event: { type: "extension_ui_request", id: "d", method: "input", title: "Name?", placeholder: "x" },
      },
    ]);
    expect(s.agents.a!.dialogs).toEqual([{ id: "d", method: "input", title: "Name?", placeholder: "x" }]);
    expect(reduce(s, { type: "dialog_answered", agent: "a", id: "d" }).agents.a!.dialogs).toEqual([]);
  });

  it.each(["answered", "timeout", "dismissed", "worker_exited"])(
    "drops a dialog the supervisor says closed (%s), and only that one",
    (reason) => {
      const ask = (seq: number, id: string) =>
        ({
          type: "event",
          agent: "a",
          seq,
          event: { type: "extension_ui_request", id, method: "confirm", title: `${id}?` },
        }) as TuiAction;
      const s = fold([
        ask(1, "d1"),
        ask(2, "d2"),
        { type: "event", agent: "a", seq: 3, event: { type: "dialog_closed", id: "d1", reason } } as TuiAction,
      ]);
      expect(s.agents.a!.dialogs.map((d) => d.id)).toEqual(["d2"]);
    },
  );

  describe("dialogs whose worker is gone without a dialog_closed (a supervisor killed with -9)", () => {
    const ask = (seq: number, id: string, agent = "a") =>
      ({
        type: "event",
        agent,
        seq,
        event: { type: "extension_ui_request", id, method: "confirm", title: `${id}?` },
      }) as TuiAction;
    const started = (seq: number, pid: number, agent = "a") =>
      ({ type: "event", agent, seq, event: { type: "worker_started", pid, command: [] } }) as TuiAction;
    const list = (status: AgentStatus, pid: number | null, lastSeq: number, reconnected = false): TuiAction => ({
      type: "agents",
      agents: [info("a", status, { pid, lastSeq })],
      reconnected,
    });
    const open = (actions: TuiAction[]) => fold(actions).agents.a!.dialogs.map((d) => d.id);

    it.each<{ what: string; actions: TuiAction[]; open: string[] }>([
      {
        what: "a live worker's dialog stays",
        actions: [list("idle", 100, 0), started(1, 100), ask(2, "d"), list("busy", 100, 2)],
        open: ["d"],
      },
      {
        what: "a reconnect listing the agent stopped drops it",
        actions: [list("idle", 100, 0), started(1, 100), ask(2, "d"), list("stopped", null, 2, true)],
        open: [],
      },
      {
        what: "failed or in backoff: no worker either",
        actions: [list("idle", 100, 0), ask(1, "d"), list("backoff", null, 1, true)],
        open: [],
      },
      {
        what: "a stopped status with a stale pid still has no worker",
        actions: [list("idle", 100, 0), ask(1, "d"), list("failed", 100, 1, true)],
        open: [],
      },
      {
        what: "a reconnect to another worker drops the old one's dialog",
        actions: [list("idle", 100, 0), started(1, 100), ask(2, "d"), list("idle", 200, 4, true)],
        open: [],
      },
      {
        what: "a pid change drops a dialog whose asker the view never saw",
        actions: [list("idle", 100, 5), ask(6, "d"), list("idle", 200, 8, true)],
        open: [],
      },
      {
        what: "the new worker's own dialog stays",
        actions: [
          list("idle", 100, 0),
          started(1, 100),
          ask(2, "old"),
          started(3, 200),
          ask(4, "new"),
          list("idle", 200, 4, true),
        ],
        open: ["new"],
      },
      {
        what: "a list older than the dialog does not judge it",
        actions: [list("starting", null, 0), started(1, 100), ask(2, "d"), list("starting", null, 0)],
        open: ["d"],
      },
      {
        what: "a later TUI does not replay a stopped agent's dialog",
        actions: [list("stopped", null, 3), started(1, 100), ask(2, "d")],
        open: [],
      },
      {
        what: "nor one of a worker that is no longer running",
        actions: [list("idle", 200, 5), started(1, 100), ask(2, "d"), started(3, 200)],
        open: [],
      },
      {
        what: "a later TUI replays a live worker's open dialog",
        actions: [list("idle", 100, 3), started(1, 100), ask(2, "d")],
        open: ["d"],
      },
      {
        what: "and keeps a dialog asked after the list",
        actions: [list("stopped", null, 3), started(4, 100), ask(5, "d")],
        open: ["d"],
      },
    ])("$what", ({ actions, open: expected }) => {
      expect(open(actions)).toEqual(expected);
    });
  });

  it("keeps at most MAX_LINES lines", () => {
    const actions: TuiAction[] = Array.from(
      { length: MAX_LINES + 10 },
      (_, i) => ({ type: "notice", agent: "a", text: `n${i}` }) as TuiAction,
    );
    const s = fold([{ type: "agents", agents: [info("a")] }, ...actions]);
    expect(s.agents.a!.lines).toHaveLength(MAX_LINES);
    expect(s.agents.a!.lines.at(-1)!.text).toBe(`n${MAX_LINES + 9}`);
  });
});

describe("text layout", () => {
  it("wraps at spaces and hard-breaks long words", () => {
    expect(wrapText("the quick brown fox", 10)).toEqual(["the quick", "brown fox"]);
    expect(wrapText("abcdefghijkl", 5)).toEqual(["abcde", "fghij", "kl"]);
  });

  it("takes the last lines that fit, collapsing tool results", () => {
    const lines = [
      { kind: "tool" as const, text: "⏺ bash(ls)" },
      { kind: "result" as const, text: "a\nb\nc" },
    ];
    expect(tailLines(lines, { kind: "text", text: "done" }, 40, 3).map((l) => l.text)).toEqual(
      ["⏺ bash(ls)", "  ⎿ a", "    … (+2 lines)"].slice(1).concat("done"),
    );
  });

  it("wraps the same line objects anew for every width and result collapse it is shown at", () => {
    const lines = [
      { kind: "text" as const, text: "one two three four five six" },
      { kind: "result" as const, text: "a\nb\nc\nd" },
    ];
    const at = (width: number, resultLines = 1) =>
      tailLines(lines, null, width, 100, { resultLines }).map((l) => l.text);
    const narrow = ["one two", "three four", "five six", "  ⎿ a", "    … (+3", "lines)"];
    const wide = ["one two three four five six", "  ⎿ a", "    … (+3 lines)"];
    expect(at(10)).toEqual(narrow);
    expect(at(40)).toEqual(wide);
    expect(at(10)).toEqual(narrow);
    expect(at(40, 3)).toEqual(["one two three four five six", "  ⎿ a", "    b", "    c", "    … (+1 lines)"]);
    expect(at(40)).toEqual(wide);
  });
});

describe("which changes ink's part of the screen must show (sameForInk)", () => {
  const base = fold([
    { type: "connection", state: "connected", at: 0 },
    { type: "agents", agents: [info("a", "busy"), info("b", "busy")] },
  ]);
  const chrome = { header: true };
  const painted = { agents: new Set<string>(), bodies: new Set<string>(), clock: false, ...chrome };
  const zoomed = { agents: new Set<string>(), bodies: new Set(["a"]), clock: true, ...chrome };
  // The screen paints the header too (pi-orch tui).
  const paintedHeader = { ...painted, header: false };
  const cases: {
    what: string;
    action: TuiAction;
    drawn?: InkDrawn;
    same: boolean;
  }[] = [
    { what: "text streamed into a painted pane", action: delta("a", 1, "hello"), same: true },
    {
      what: "text streamed into a pane ink draws",
      action: delta("a", 1, "hello"),
      drawn: { agents: new Set(["a"]), bodies: new Set(), clock: true, ...chrome },
      same: false,
    },
    {
      what: "text streamed into another agent than the one ink draws",
      action: delta("b", 1, "hello"),
      drawn: { agents: new Set(["a"]), bodies: new Set(), clock: false, ...chrome },
      same: true,
    },
    {
      what: "a tool starting in a painted pane",
      action: {
        type: "event",
        agent: "a",
        seq: 1,
        event: { type: "tool_execution_start", toolCallId: "t", toolName: "bash", args: { command: "ls" } },
      },
      same: true,
    },
    {
      what: "a status change (the header counts it)",
      action: { type: "event", agent: "a", seq: 1, event: { type: "agent_status", status: "idle", previous: "busy" } },
      same: false,
    },
    {
      what: "a status change with the header painted (it repaints itself, keys read the store)",
      action: { type: "event", agent: "a", seq: 1, event: { type: "agent_status", status: "idle", previous: "busy" } },
      drawn: paintedHeader,
      same: true,
    },
    {
      what: "a dialog opening with the header painted (the footer says so)",
      action: {
        type: "event",
        agent: "b",
        seq: 1,
        event: { type: "extension_ui_request", id: "d", method: "confirm", title: "ok?" },
      },
      drawn: paintedHeader,
      same: false,
    },
    {
      what: "a dialog opening (the footer says so)",
      action: {
        type: "event",
        agent: "a",
        seq: 1,
        event: { type: "extension_ui_request", id: "d", method: "confirm", title: "ok?" },
      },
      same: false,
    },
    { what: "the clock while only painted panes tick", action: { type: "tick", now: 5 }, same: true },
    {
      what: "the clock while ink shows it",
      action: { type: "tick", now: 5 },
      drawn: { agents: new Set(), bodies: new Set(), clock: true, ...chrome },
      same: false,
    },
    { what: "the connection", action: { type: "connection", state: "disconnected", at: 1 }, same: false },
    { what: "a new agent", action: delta("c", 1, "hi"), same: false },
    {
      what: "text streamed into the zoomed agent's open line",
      action: delta("a", 1, "hello"),
      drawn: zoomed,
      same: true,
    },
    {
      what: "a finished line in the zoomed agent (the footer counts lines)",
      action: delta("a", 1, "hello\nworld"),
      drawn: zoomed,
      same: false,
    },
    {
      what: "a tool starting in the zoomed agent (its header shows it)",
      action: {
        type: "event",
        agent: "a",
        seq: 1,
        event: { type: "tool_execution_start", toolCallId: "t", toolName: "bash", args: { command: "ls" } },
      },
      drawn: zoomed,
      same: false,
    },
    {
      what: "the periodic agent list with nothing new",
      action: { type: "agents", agents: [info("a", "busy"), info("b", "busy")] },
      same: true,
    },
    {
      what: "an agent list with a status changed",
      action: { type: "agents", agents: [info("a", "idle"), info("b", "busy")] },
      same: false,
    },
  ];
  for (const c of cases) {
    it(`${c.same ? "skips" : "shows"} ${c.what}`, () => {
      expect(sameForInk(base, reduce(base, c.action), c.drawn ?? painted)).toBe(c.same);
    });
  }
});
