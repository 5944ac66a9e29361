import { afterEach, describe, expect, it, vi } from "vitest";
import { layoutList, layoutPanes } from "../../../cli/tui/layout.js";
import { info, mount, names } from "./helpers.js";

// Every app a test mounted (a list: a second open() in one test must not drop the first).
const mounted: ReturnType<typeof mount>[] = [];
afterEach(() => {
  for (const m of mounted.splice(0)) m.cleanup();
});

function open(...args: Parameters<typeof mount>) {
  const m = mount(...args);
  mounted.push(m);
  return m;
}

/** The text of the pane whose rectangle starts at column `x` with `width`, line by line. */
function column(frame: string, x: number, width: number): string {
  return frame
    .split("\n")
    .map((l) => l.slice(x, x + width))
    .join("\n");
}

const ENTER = "\r";
const ESC = "\x1b";

describe("the grid", () => {
  for (const [cols, rows] of [
    [100, 30],
    [80, 24],
  ] as const) {
    for (const count of [1, 2, 4, 9, 20]) {
      it(`shows ${count} agent(s) on a ${cols}×${rows} terminal in the grid layoutPanes gives`, async () => {
        const all = names(count);
        const t = open(
          all.map((n) => info(n)),
          { cols, rows },
        );
        const layout = layoutPanes(count, cols, rows - 3);
        const onFirstPage = all.slice(0, layout.perPage);
        // Agents that need pages of panes are listed first; v shows the grid.
        if (layout.pages > 1) {
          await vi.waitFor(() => expect(t.frame()).toContain("▶"));
          t.stdin.write("v");
        }
        await vi.waitFor(() => expect(t.frame()).toContain(onFirstPage.at(-1)!));
        await vi.waitFor(() => expect(t.frame()).not.toContain("▶"));
        const frame = t.frame();
        for (const n of onFirstPage) expect(frame).toContain(n);
        for (const n of all.slice(layout.perPage)) expect(frame).not.toContain(n);
        // Agents of one grid row share a screen line, in slot order.
        const lines = frame.split("\n");
        for (let r = 0; r < layout.rows; r++) {
          const rowNames = onFirstPage.slice(r * layout.columns, (r + 1) * layout.columns);
          if (rowNames.length === 0) continue;
          const line = lines.find((l) => l.includes(rowNames[0]!));
          expect(line, `row ${r} of ${rowNames.join(", ")}`).toBeDefined();
          const positions = rowNames.map((n) => line!.indexOf(n));
          expect(positions.every((p) => p >= 0)).toBe(true);
          expect([...positions].sort((a, b) => a - b)).toEqual(positions);
        }
        expect(lines.length).toBeLessThanOrEqual(rows);
        if (layout.pages > 1) {
          expect(frame).toContain(`page 1/${layout.pages}`);
          t.stdin.write("\x1b[6~"); // PgDn
          await vi.waitFor(() => expect(t.frame()).toContain(all[layout.perPage]!));
          expect(t.frame()).toContain(`page 2/${layout.pages}`);
        }
      });
    }
  }

  it("draws a status change and a streamed delta in the right pane", async () => {
    const t = open([info("agent-01"), info("agent-02")], { cols: 100, rows: 30 });
    await vi.waitFor(() => expect(t.frame()).toContain("agent-02"));
    t.store.dispatch({
      type: "event",
      agent: "agent-02",
      seq: 1,
      event: { type: "agent_status", status: "busy", previous: "idle", pid: 1, restarts: 0 },
    });
    t.store.dispatch({
      type: "event",
      agent: "agent-02",
      seq: 2,
      event: {
        type: "message_update",
        message: {},
        assistantMessageEvent: { type: "text_delta", contentIndex: 0, delta: "streaming to two" },
      },
    });
    await vi.waitFor(() => expect(t.frame()).toContain("streaming to two"));
    const left = column(t.frame(), 0, 50);
    const right = column(t.frame(), 50, 50);
    expect(right).toContain("busy");
    expect(right).toContain("streaming to two");
    expect(left).not.toContain("busy");
    expect(left).not.toContain("streaming");
    expect(left).toContain("idle");
  });

  it("shows the running tool with its argument summary, and tokens once the message ends", async () => {
    const t = open([info("agent-01")], { cols: 100, rows: 20 });
    t.store.dispatch({
      type: "event",
      agent: "agent-01",
      seq: 1,
      event: { type: "tool_execution_start", toolCallId: "c1", toolName: "bash", args: { command: "ls -la src" } },
    });
    await vi.waitFor(() => expect(t.frame()).toMatch(/⏺ bash ls -la src \d/));
    t.store.dispatch({
      type: "event",
      agent: "agent-01",
      seq: 2,
      event: {
        type: "tool_execution_end",
        toolCallId: "c1",
        toolName: "bash",
        result: { content: [{ type: "text", text: "a.ts\nb.ts" }] },
        isError: false,
      },
    });
    t.store.dispatch({
      type: "event",
      agent: "agent-01",
      seq: 3,
      event: {
        type: "message_end",
        message: {
          role: "assistant",
          provider: "faux",
          model: "faux-1",
          content: [],
          stopReason: "stop",
          usage: { totalTokens: 1234, cost: { total: 0.0123 } },
        },
      },
    });
    // Tokens and cost in the pane, the fleet's cost in the title.
    await vi.waitFor(() => expect(t.frame()).toContain("1.2k tok $0.01"));
    expect(t.frame().split("\n")[0]).toContain("· $0.01");
    expect(t.frame()).toContain("⎿ a.ts");
    expect(t.frame()).not.toMatch(/⏺ bash ls -la src \d/);
  });

  it("draws no colour codes with colour off (NO_COLOR)", async () => {
    const t = open([info("agent-01", "unresponsive")], { cols: 80, rows: 20 });
    await vi.waitFor(() => expect(t.frame()).toContain("agent-01"));
    expect(t.frame()).not.toMatch(/\x1b\[[0-9;]*m/);
  });

  it("says when the supervisor is gone and when it is back", async () => {
    const t = open([info("agent-01")], { cols: 100, rows: 20 });
    t.store.dispatch({ type: "connection", state: "disconnected", message: "connection closed", at: Date.now() });
    await vi.waitFor(() => expect(t.frame()).toContain("supervisor unreachable"));
    t.store.dispatch({ type: "connection", state: "connected", at: Date.now() });
    await vi.waitFor(() => expect(t.frame()).toContain("● connected"));
  });

  it("says how to bring the supervisor back while it is gone", async () => {
    const t = open([info("agent-01")], {
      cols: 160,
      rows: 20,
      reconnectHint: "pi-orch serve, or any pi-orch command, starts one",
    });
    t.store.dispatch({ type: "connection", state: "disconnected", message: "connection closed", at: Date.now() });
    await vi.waitFor(() =>
      expect(t.frame()).toContain("reconnecting… (pi-orch serve, or any pi-orch command, starts one)"),
    );
  });
});

describe("the list overview at many agents", () => {
  const DOWN = "\x1b[B";
  const PGDN = "\x1b[6~";
  for (const painted of [true, false]) {
    it(`lists 64 agents a row each beside the focused one's pane, and ↓ reaches every one (${painted ? "painted" : "ink alone"})`, async () => {
      const all = names(64);
      const t = open(
        all.map((n) => info(n)),
        { cols: 100, rows: 30, painted },
      );
      const list = layoutList(64, 100, 27);
      const lines = () => t.frame().split("\n");
      /** The focused agent: the list row with the mark, and the pane beside the list. */
      const focus = () => {
        const marked = lines().filter((l) => l.startsWith("▶"));
        const pane = lines()
          .map((l) => l.slice(list.listWidth))
          .find((l) => l.startsWith("║ "));
        return { marked: marked.map((l) => /agent-\d+/.exec(l)?.[0]), pane: pane?.split(/\s+/)[1] };
      };
      await vi.waitFor(() => expect(focus()).toEqual({ marked: ["agent-01"], pane: "agent-01" }));
      expect(lines()[0]).toContain(`64 agents`);
      expect(lines()[0]).toContain(`page 1/${list.pages}`);
      // A row each, in order, every one of the page, within the terminal.
      for (const [i, n] of all.slice(0, list.perPage).entries()) expect(lines()[1 + i]).toContain(n);
      expect(t.frame()).not.toContain(all[list.perPage]!);
      expect(lines().length).toBeLessThanOrEqual(30);
      for (let i = 1; i < all.length; i++) {
        t.stdin.write(DOWN);
        await vi.waitFor(() => expect(focus()).toEqual({ marked: [all[i]], pane: all[i] }));
      }
      expect(lines()[0]).toContain(`page ${list.pages}/${list.pages}`);
      // PgDn from the last page stays; 3 focuses the third row of the page; Tab wraps to the first agent.
      t.stdin.write(`${PGDN}3`);
      await vi.waitFor(() => expect(focus().pane).toBe(all[2 * list.perPage + 2]));
      t.stdin.write("\t".repeat(64 - (2 * list.perPage + 2)));
      await vi.waitFor(() => expect(focus()).toEqual({ marked: ["agent-01"], pane: "agent-01" }));
      // v: the paged grid instead, and back.
      t.stdin.write("v");
      await vi.waitFor(() => expect(t.frame()).not.toContain("▶"));
      expect(lines()[0]).toContain(`page 1/${layoutPanes(64, 100, 27).pages}`);
      t.stdin.write("v");
      await vi.waitFor(() => expect(focus().marked).toEqual(["agent-01"]));
    });
  }

  it("shows what a listed agent asks, runs and writes, and zooms the focused one with Enter", async () => {
    const all = names(40);
    const t = open(
      all.map((n) => info(n, n === "agent-02" ? "busy" : "idle")),
      { cols: 120, rows: 30 },
    );
    await vi.waitFor(() => expect(t.frame()).toContain("▶"));
    t.store.dispatch({
      type: "event",
      agent: "agent-02",
      seq: 1,
      event: { type: "tool_execution_start", toolCallId: "t1", toolName: "bash", args: { command: "npm test" } },
    });
    t.store.dispatch({
      type: "event",
      agent: "agent-03",
      seq: 1,
      event: { type: "message_update", assistantMessageEvent: { type: "text_delta", delta: "all green here" } },
    });
    await vi.waitFor(() => {
      const rows = t.frame().split("\n");
      expect(rows.find((l) => l.includes("agent-02"))).toMatch(/⏺ bash npm test/);
      expect(rows.find((l) => l.includes("agent-03"))).toContain("all green here");
    });
    t.stdin.write("\x1b[B\r");
    await vi.waitFor(() => expect(t.frame()).toContain("Esc back"));
    expect(t.frame()).not.toContain("agent-03");
  });
});

describe("keys", () => {
  it("sends a prompt typed into the focused pane to that agent", async () => {
    const t = open([info("agent-01"), info("agent-02")], { cols: 100, rows: 30 });
    await vi.waitFor(() => expect(t.frame()).toContain("agent-02"));
    t.stdin.write("2");
    await vi.waitFor(() => expect(column(t.frame(), 50, 50)).toContain("╔"));
    t.stdin.write("p");
    await vi.waitFor(() => expect(column(t.frame(), 50, 50)).toContain("prompt>"));
    t.stdin.write("list the files");
    await vi.waitFor(() => expect(t.frame()).toContain("list the files"));
    t.stdin.write(ENTER);
    await vi.waitFor(() =>
      expect(t.control.calls).toEqual([
        { method: "rpc", agent: "agent-02", arg: { type: "prompt", message: "list the files" } },
      ]),
    );
    await vi.waitFor(() => expect(t.frame()).not.toContain("prompt>"));
  });

  it("handles every key of one read in order: 4p + text + Enter prompts the 4th agent; two arrows move twice; Alt+a aborts nothing", async () => {
    const t = open(
      names(6).map((n) => info(n, "busy")),
      { cols: 120, rows: 40 },
    );
    await vi.waitFor(() => expect(t.frame()).toContain("agent-06"));
    t.stdin.write("4pcheck the logs\r");
    await vi.waitFor(() =>
      expect(t.control.calls).toEqual([
        {
          method: "rpc",
          agent: "agent-04",
          arg: { type: "prompt", message: "check the logs", streamingBehavior: "followUp" },
        },
      ]),
    );
    t.stdin.write("1\x1b[C\x1b[Ca");
    await vi.waitFor(() =>
      expect(t.control.calls.at(-1)).toEqual({ method: "rpc", agent: "agent-03", arg: { type: "abort" } }),
    );
    t.stdin.write("\x1ba");
    await new Promise((r) => setTimeout(r, 50));
    expect(t.control.calls).toHaveLength(2);
  });

  it("steers and follows up a busy agent, aborts, stops and restarts it", async () => {
    const t = open([info("agent-01", "busy")], { cols: 100, rows: 20 });
    await vi.waitFor(() => expect(t.frame()).toContain("agent-01"));
    for (const [key, text] of [
      ["s", "go left"],
      ["f", "then right"],
    ] as const) {
      t.stdin.write(key);
      await vi.waitFor(() => expect(t.frame()).toMatch(/(steer|follow-up)>/));
      t.stdin.write(text);
      await vi.waitFor(() => expect(t.frame()).toContain(text));
      t.stdin.write(ENTER);
      await vi.waitFor(() => expect(t.frame()).not.toMatch(/(steer|follow-up)>/));
    }
    t.stdin.write("a");
    await vi.waitFor(() => expect(t.control.calls).toHaveLength(3));
    // Stop and restart ask first: n (or any other key) does nothing, y does it.
    t.stdin.write("x");
    await vi.waitFor(() => expect(t.frame()).toContain("stop agent-01 and abort its run? y/n"));
    t.stdin.write("n");
    await vi.waitFor(() => expect(t.frame()).toContain("cancelled"));
    expect(t.control.calls).toHaveLength(3);
    t.stdin.write("x");
    await vi.waitFor(() => expect(t.frame()).toContain("? y/n"));
    t.stdin.write("y");
    // The status line says when the action is done, not "stopping…" for ever.
    await vi.waitFor(() => expect(t.frame()).toContain("stopped agent-01"));
    t.stdin.write("r");
    await vi.waitFor(() => expect(t.frame()).toContain("restart agent-01 and abort its run? y/n"));
    t.stdin.write("y");
    await vi.waitFor(() => expect(t.frame()).toContain("restarted agent-01"));
    await vi.waitFor(() => expect(t.control.calls).toHaveLength(5));
    expect(t.control.calls).toEqual([
      { method: "rpc", agent: "agent-01", arg: { type: "steer", message: "go left" } },
      { method: "rpc", agent: "agent-01", arg: { type: "follow_up", message: "then right" } },
      { method: "rpc", agent: "agent-01", arg: { type: "abort" } },
      { method: "stop", agent: "agent-01" },
      { method: "restart", agent: "agent-01" },
    ]);
  });

  it("takes the keys typed as soon as the input line, the grid, the form or the help show (before React's passive effects)", async () => {
    const t = open([info("agent-01"), info("agent-02")], { cols: 100, rows: 30 });
    await vi.waitFor(() => expect(t.frame()).toContain("agent-02"));
    // The input line: its first keys.
    const line = t.typeAtFrame((f) => f.includes("prompt>"), "one");
    t.stdin.write("p");
    await line;
    await vi.waitFor(() => expect(t.frame()).toContain("prompt> one"));
    // The grid again: a key right after Enter closed the line.
    const grid = t.typeAtFrame((f) => !f.includes("prompt>"), "p");
    t.stdin.write(ENTER);
    await grid;
    await vi.waitFor(() => expect(t.frame()).toContain("prompt>"));
    t.stdin.write(ESC);
    await vi.waitFor(() => expect(t.frame()).not.toContain("prompt>"));
    expect(t.control.calls).toEqual([{ method: "rpc", agent: "agent-01", arg: { type: "prompt", message: "one" } }]);
    // The new-agent form, and the grid after Esc closed it.
    const form = t.typeAtFrame((f) => f.includes("new agent"), "helper");
    t.stdin.write("n");
    await form;
    await vi.waitFor(() => expect(t.frame()).toMatch(/name\s*helper/));
    const help = t.typeAtFrame((f) => !f.includes("new agent"), "?");
    t.stdin.write(ESC);
    await help;
    await vi.waitFor(() => expect(t.frame()).toContain("new agent: name, cwd, worktree"));
    // The help's own key, right after it showed... and the grid's after it closed.
    const back = t.typeAtFrame((f) => !f.includes("new agent: name"), "x");
    t.stdin.write("q");
    await back;
    await vi.waitFor(() => expect(t.frame()).toContain("stop agent-01? y/n"));
    expect(t.quits()).toBe(0);
  });

  it("edits the input line with the cursor and submits text and Enter that arrive in one read", async () => {
    const t = open([info("agent-01")], { cols: 100, rows: 20 });
    await vi.waitFor(() => expect(t.frame()).toContain("agent-01"));
    t.stdin.write("p");
    await vi.waitFor(() => expect(t.frame()).toContain("prompt>"));
    t.stdin.write("abcd");
    t.stdin.write("\x1b[D"); // ←
    t.stdin.write("X");
    t.stdin.write("\x7f\x7f"); // two backspaces in one read
    t.stdin.write("\x1b[H"); // Home
    t.stdin.write("> ");
    t.stdin.write("end\r"); // text and Enter in one read
    await vi.waitFor(() =>
      expect(t.control.calls).toEqual([
        { method: "rpc", agent: "agent-01", arg: { type: "prompt", message: "> endabd" } },
      ]),
    );
  });

  it("keeps the line breaks of a bracketed paste and sends them with Enter", async () => {
    const t = open([info("agent-01")], { cols: 100, rows: 20 });
    await vi.waitFor(() => expect(t.frame()).toContain("agent-01"));
    t.stdin.write("p");
    await vi.waitFor(() => expect(t.frame()).toContain("prompt>"));
    t.stdin.write("\x1b[200~first line\r\nsecond line\x1b[201~");
    await vi.waitFor(() => expect(t.frame()).toContain("first line↵second line"));
    t.stdin.write("\r");
    await vi.waitFor(() =>
      expect(t.control.calls).toEqual([
        { method: "rpc", agent: "agent-01", arg: { type: "prompt", message: "first line\nsecond line" } },
      ]),
    );
  });

  it("an idle agent is not steered, followed up or aborted: the status line says why", async () => {
    const t = open([info("agent-01")], { cols: 100, rows: 20 });
    await vi.waitFor(() => expect(t.frame()).toContain("agent-01"));
    t.stdin.write("s");
    await vi.waitFor(() => expect(t.frame()).toContain("agent-01 is idle: press p to prompt it"));
    t.stdin.write("a");
    await vi.waitFor(() => expect(t.frame()).toContain("agent-01 is idle: no run to abort"));
    expect(t.frame()).not.toContain("steer>");
    expect(t.control.calls).toEqual([]);
  });

  it("answers a confirm dialog of its agent", async () => {
    const t = open([info("agent-01"), info("agent-02")], { cols: 100, rows: 30 });
    t.store.dispatch({
      type: "event",
      agent: "agent-02",
      seq: 1,
      event: {
        type: "extension_ui_request",
        id: "dlg-1",
        method: "confirm",
        title: "Delete build/?",
        message: "12 files",
      },
    });
    await vi.waitFor(() => expect(column(t.frame(), 50, 50)).toContain("Delete build/?"));
    expect(t.frame()).toContain("agent-02 asks a question");
    // The modal stays inside its pane: every row of the pane ends with the pane's border.
    const rows = column(t.frame(), 50, 50).split("\n").slice(2, 12);
    expect(rows.some((r) => r.includes("y yes · n no"))).toBe(true);
    for (const r of rows) expect(r.at(-1)).toBe("│");
    t.stdin.write("2");
    await vi.waitFor(() => expect(t.frame()).not.toContain("asks a question"));
    t.stdin.write("y");
    await vi.waitFor(() =>
      expect(t.control.calls).toEqual([
        { method: "rpc", agent: "agent-02", arg: { type: "extension_ui_response", id: "dlg-1", confirmed: true } },
      ]),
    );
    await vi.waitFor(() => expect(t.frame()).not.toContain("Delete build/?"));
  });

  it("answers a select dialog with the chosen option", async () => {
    const t = open([info("agent-01")], { cols: 100, rows: 30 });
    t.store.dispatch({
      type: "event",
      agent: "agent-01",
      seq: 1,
      event: {
        type: "extension_ui_request",
        id: "dlg-2",
        method: "select",
        title: "Pick one",
        options: ["red", "green", "blue"],
      },
    });
    await vi.waitFor(() => expect(t.frame()).toContain("3. blue"));
    t.stdin.write("\x1b[B"); // down
    await vi.waitFor(() => expect(t.frame()).toContain("› 2. green"));
    t.stdin.write(ENTER);
    await vi.waitFor(() =>
      expect(t.control.calls).toEqual([
        { method: "rpc", agent: "agent-01", arg: { type: "extension_ui_response", id: "dlg-2", value: "green" } },
      ]),
    );
  });

  it("zooms the focused agent into a scrollable transcript and returns with Esc", async () => {
    const t = open([info("agent-01"), info("agent-02")], { cols: 100, rows: 20 });
    // Drawn first: the lines then reach only the painted pane, and the zoom must still count them.
    await vi.waitFor(() => expect(t.frame()).toContain("agent-02"));
    for (let i = 1; i <= 40; i++) t.store.dispatch({ type: "notice", agent: "agent-02", text: `line ${i}` });
    await vi.waitFor(() => expect(t.frame()).toContain("line 40"));
    t.stdin.write("\t");
    await vi.waitFor(() => expect(column(t.frame(), 50, 50)).toContain("╔"));
    t.stdin.write(ENTER);
    await vi.waitFor(() => expect(t.frame()).toContain("Esc back"));
    expect(t.frame()).toContain("line 40");
    expect(t.frame()).not.toContain("agent-01");
    expect(t.frame()).toMatch(/↑ \d+ earlier/);
    t.stdin.write("\x1b[5~"); // PgUp
    await vi.waitFor(() => expect(t.frame()).not.toContain("line 40"));
    expect(t.frame()).toMatch(/↓ \d+ more below/);
    t.stdin.write(ESC);
    await vi.waitFor(() => expect(t.frame()).toContain("agent-01"));
  });

  it("says in the help what quitting does: agents keep running, or (the demo) are stopped", async () => {
    const plain = open([info("agent-01")], { cols: 100, rows: 24 });
    plain.stdin.write("?");
    await vi.waitFor(() => expect(plain.frame()).toContain("quit the TUI (the agents keep running)"));
    const demo = open([info("agent-01")], {
      cols: 100,
      rows: 24,
      quitNote: "the demo stops its agents and removes its folder",
    });
    demo.stdin.write("?");
    await vi.waitFor(() =>
      expect(demo.frame()).toContain("quit the TUI (the demo stops its agents and removes its folder)"),
    );
  });

  it("opens the help and the new-agent form, and spawns from the form", async () => {
    const t = open([info("agent-01")], { cols: 100, rows: 24 });
    t.stdin.write("?");
    await vi.waitFor(() => expect(t.frame()).toContain("new agent: name, cwd, worktree"));
    t.stdin.write(ESC);
    await vi.waitFor(() => expect(t.frame()).toContain("agent-01"));
    t.stdin.write("n");
    await vi.waitFor(() => expect(t.frame()).toContain("new agent"));
    t.stdin.write("helper");
    await vi.waitFor(() => expect(t.frame()).toContain("helper"));
    t.stdin.write("\x1b[B"); // cwd
    await vi.waitFor(() => expect(t.frame()).toMatch(/› cwd/));
    t.stdin.write("\x1b[B"); // worktree
    await vi.waitFor(() => expect(t.frame()).toMatch(/› worktree/));
    t.stdin.write(" ");
    await vi.waitFor(() => expect(t.frame()).toContain("[x] yes"));
    t.stdin.write("\x1b[B"); // prompt
    await vi.waitFor(() => expect(t.frame()).toMatch(/› prompt/));
    t.stdin.write("list the files");
    await vi.waitFor(() => expect(t.frame()).toContain("list the files"));
    t.stdin.write(ENTER);
    await vi.waitFor(() => expect(t.control.calls).toHaveLength(1));
    expect(t.control.calls[0]).toMatchObject({
      method: "spawn",
      arg: { name: "helper", worktree: {}, prompt: "list the files", wait: false },
    });
  });

  it("keeps the form and what was typed when the name is refused, here or by the supervisor, and says what is allowed", async () => {
    const t = open([info("agent-01")], { cols: 120, rows: 24 });
    await vi.waitFor(() => expect(t.frame()).toContain("agent-01"));
    t.stdin.write("n");
    await vi.waitFor(() => expect(t.frame()).toContain("new agent"));
    t.stdin.write("naïve");
    t.stdin.write("\x1b[B\x1b[B\x1b[B");
    await vi.waitFor(() => expect(t.frame()).toMatch(/› prompt/));
    t.stdin.write("list the files");
    await vi.waitFor(() => expect(t.frame()).toContain("list the files"));
    t.stdin.write(ENTER);
    await vi.waitFor(() =>
      expect(t.frame()).toContain('invalid agent name "naïve": use 1-64 ASCII letters (a-z, A-Z)'),
    );
    expect(t.frame()).toContain("list the files");
    expect(t.control.calls).toEqual([]);
    // The supervisor refuses a name taken: the form comes back with it.
    t.control.spawn = async (params) => {
      t.control.calls.push({ method: "spawn", arg: params });
      throw new Error('an agent named "agent-01" already exists; pick another name');
    };
    t.stdin.write("\x1b[A\x1b[A\x1b[A");
    await vi.waitFor(() => expect(t.frame()).toMatch(/› name/));
    for (let i = 0; i < 5; i++) t.stdin.write("\x7f");
    t.stdin.write("agent-01");
    await vi.waitFor(() => expect(t.frame()).toContain("agent-01"));
    t.stdin.write("\x13"); // Ctrl+S starts
    await vi.waitFor(() => expect(t.frame()).toContain('an agent named "agent-01" already exists'));
    expect(t.frame()).toContain("new agent");
    expect(t.frame()).toContain("list the files");
    expect(t.control.calls).toHaveLength(1);
  });

  it("quits with q", async () => {
    const t = open([info("agent-01")], { cols: 80, rows: 20 });
    await vi.waitFor(() => expect(t.frame()).toContain("agent-01"));
    t.stdin.write("q");
    await vi.waitFor(() => expect(t.quits()).toBe(1));
  });
});

describe("single-agent mode", () => {
  it("prompts when idle, steers while busy, and quits on the second Ctrl+C", async () => {
    const t = open([info("pi")], { cols: 90, rows: 20, mode: "single" });
    await vi.waitFor(() => expect(t.frame()).toContain("prompt>"));
    t.stdin.write("hello");
    await vi.waitFor(() => expect(t.frame()).toContain("hello"));
    t.stdin.write(ENTER);
    await vi.waitFor(() => expect(t.control.calls).toHaveLength(1));
    t.store.dispatch({
      type: "event",
      agent: "pi",
      seq: 1,
      event: { type: "agent_status", status: "busy", previous: "idle", pid: 1, restarts: 0 },
    });
    await vi.waitFor(() => expect(t.frame()).toContain("steer>"));
    t.stdin.write("faster");
    await vi.waitFor(() => expect(t.frame()).toContain("faster"));
    t.stdin.write(ENTER);
    await vi.waitFor(() => expect(t.control.calls).toHaveLength(2));
    expect(t.control.calls).toEqual([
      { method: "rpc", agent: "pi", arg: { type: "prompt", message: "hello" } },
      { method: "rpc", agent: "pi", arg: { type: "steer", message: "faster" } },
    ]);
    t.stdin.write("\x03");
    await vi.waitFor(() => expect(t.frame()).toContain("press Ctrl+C again to quit"));
    expect(t.control.calls.at(-1)).toEqual({ method: "rpc", agent: "pi", arg: { type: "abort" } });
    expect(t.quits()).toBe(0);
    t.stdin.write("\x03");
    await vi.waitFor(() => expect(t.quits()).toBe(1));
  });
});

describe("painted panes", () => {
  it("look as ink draws them: the same frame with the screen painting the grid and without", async () => {
    const agents = [
      info("agent-01", "busy", { restarts: 2 }),
      info("agent-02"),
      info("agent-03", "failed", { worktree: { path: "/w/t", branch: "pi-orch/fix" } as never }),
      info("agent-04"),
    ];
    const events = [
      {
        type: "event",
        agent: "agent-01",
        seq: 1,
        event: { type: "message_start", message: { role: "user", content: "do the thing" } },
      },
      {
        type: "event",
        agent: "agent-01",
        seq: 2,
        event: { type: "tool_execution_start", toolCallId: "t1", toolName: "bash", args: { command: "ls -la src" } },
      },
      {
        type: "event",
        agent: "agent-02",
        seq: 1,
        event: {
          type: "message_update",
          message: {},
          assistantMessageEvent: {
            type: "thinking_delta",
            contentIndex: 0,
            delta: "pondering a long thought that wraps over more than one line of this pane for sure\nsecond",
          },
        },
      },
      {
        type: "event",
        agent: "agent-04",
        seq: 1,
        event: {
          type: "message_update",
          message: {},
          assistantMessageEvent: {
            type: "text_delta",
            contentIndex: 0,
            delta: Array.from({ length: 40 }, (_, i) => `word${i}`).join(" "),
          },
        },
      },
    ] as const;
    const frames: string[] = [];
    for (const painted of [true, false]) {
      const t = open(agents, { cols: 100, rows: 30, painted });
      for (const e of events) t.store.dispatch(e as never);
      await vi.waitFor(() => expect(t.frame()).toContain("word39"));
      t.store.dispatch({ type: "tick", now: 5_000 });
      await vi.waitFor(() => expect(t.frame()).toMatch(/⏺ bash/));
      frames.push(t.frame());
      // Painted: ink's own frame leaves the grid blank (only the header and footer are its).
      if (painted) expect(t.lastFrame()).not.toContain("word39");
      else expect(t.lastFrame()).toContain("word39");
    }
    expect(frames[0]).toContain("╭");
    expect(frames[0]).toBe(frames[1]);
  });
  it("paint the header: 64 agents changing state repaint its counts, ink draws no frame for it", async () => {
    const t = open(
      names(64).map((n) => info(n)),
      { cols: 200, rows: 50 },
    );
    await vi.waitFor(() => expect(t.frame().split("\n")[0]).toContain("64 agents · 64 idle"));
    const inkFrames = t.frames.length;
    for (const [i, name] of names(64).entries())
      if (i % 2 === 0)
        t.store.dispatch({
          type: "event",
          agent: name,
          seq: 1,
          event: { type: "agent_status", status: "busy", previous: "idle" },
        });
    await vi.waitFor(() => expect(t.frame().split("\n")[0]).toContain("64 agents · 32 working · 32 idle"));
    expect(t.frames.length).toBe(inkFrames);
    // Ink's own frame keeps the header row blank: the screen paints it.
    expect(t.lastFrame()?.split("\n")[0]?.trim()).toBe("");
  });
  it("paint the zoomed transcript as ink draws it, scrolled too", async () => {
    const frames: string[][] = [];
    for (const painted of [true, false]) {
      const t = open([info("agent-01")], { cols: 80, rows: 16, mode: "single", painted });
      for (let i = 1; i <= 30; i++) t.store.dispatch({ type: "notice", agent: "agent-01", text: `line ${i}` });
      t.store.dispatch({
        type: "event",
        agent: "agent-01",
        seq: 1,
        event: {
          type: "message_update",
          message: {},
          assistantMessageEvent: { type: "text_delta", contentIndex: 0, delta: "still streaming" },
        },
      } as never);
      await vi.waitFor(() => expect(t.frame()).toContain("still streaming"));
      const seen = [t.frame()];
      if (painted) expect(t.lastFrame()).not.toContain("line 30");
      t.stdin.write("\x1b[5~"); // PgUp
      await vi.waitFor(() => expect(t.frame()).not.toContain("still streaming"));
      seen.push(t.frame());
      frames.push(seen);
    }
    expect(frames[0]).toEqual(frames[1]);
  });
});
