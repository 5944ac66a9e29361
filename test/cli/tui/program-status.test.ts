import { describe, expect, it } from "vitest";
import { TerminalReplies } from "../../../cli/tui/keys.js";
import { ProgramStatusReporter } from "../../../cli/tui/program-status.js";
import { initialState, reduce, type TuiAction, type TuiState } from "../../../cli/tui/state.js";
import { formatProgramStatus, PROGRAM_STATUS_QUERY } from "../../../shared/activity.js";
import { info } from "./helpers.js";

describe("terminal replies taken out of the keys", () => {
  it("takes a reply split over reads as ink hands it on, and keeps the keys around it", () => {
    const replies: string[] = [];
    const r = new TerminalReplies((x) => replies.push(x));
    r.expecting = true;
    // ink splits ESC ] 7501;? ESC \ into three reads.
    expect(["4", "\x1b]", "7501;?", "\x1b\\", "p"].map((read) => r.filter(read))).toEqual(["4", "", "", "", "p"]);
    expect(replies).toEqual(["\x1b]7501;?\x1b\\"]);
    // All in one read, a BEL-ended one, and the device attributes.
    expect(r.filter("a\x1b]11;rgb:0/0/0\x07b\x1b[?62;22cc")).toBe("abc");
    expect(replies.slice(1)).toEqual(["\x1b]11;rgb:0/0/0\x07", "\x1b[?62;22c"]);
  });

  it("leaves Alt+] and other sequences as keys while no query is out", () => {
    const replies: string[] = [];
    const r = new TerminalReplies((x) => replies.push(x));
    expect(r.filter("\x1b]x\x1b[A")).toBe("\x1b]x\x1b[A");
    r.expecting = true;
    expect(r.filter("\x1b[A\x1b[1;3C")).toBe("\x1b[A\x1b[1;3C");
    expect(replies).toEqual([]);
  });

  it("drops an unended reply past 4 KB instead of holding the keys forever", () => {
    const r = new TerminalReplies(() => {});
    r.expecting = true;
    expect(r.filter(`\x1b]${"x".repeat(5000)}`)).toBe("");
    r.expecting = false;
    expect(r.filter("q")).toBe("q");
  });
});

/** A store of agents the reporter reads, changed by actions. */
class Store {
  state: TuiState = initialState(0);
  private listeners = new Set<() => void>();
  getState = () => this.state;
  subscribe = (l: () => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };
  act(...actions: TuiAction[]) {
    this.state = actions.reduce(reduce, this.state);
    for (const l of this.listeners) l();
  }
}

const event = (agent: string, seq: number, e: Record<string, unknown>): TuiAction =>
  ({ type: "event", agent, seq, event: e }) as TuiAction;

describe("the fleet's program status on the terminal", () => {
  it("asks the terminal first and reports only once it answers; clears its status at the end", () => {
    const store = new Store();
    store.act({ type: "agents", agents: [info("a", "busy")] });
    const out: string[] = [];
    const reporter = new ProgramStatusReporter(store, (t) => out.push(t), {});
    expect(out).toEqual([`${PROGRAM_STATUS_QUERY}\x1b[c`]);
    store.act(event("a", 1, { type: "agent_start" }));
    expect(out).toHaveLength(1);
    reporter.replies.filter("\x1b]7501;?\x1b\\");
    expect(out.at(-1)).toBe(formatProgramStatus({ state: "working", message: "a" }));
    store.act(
      event("a", 2, {
        type: "extension_ui_request",
        id: "d1",
        method: "confirm",
        title: "Deploy?",
        message: "to production",
      }),
    );
    expect(out.at(-1)).toBe(formatProgramStatus({ state: "blocked", message: "a: Deploy?: to production" }));
    const count = out.length;
    store.act(event("a", 3, { type: "message_update" }));
    expect(out).toHaveLength(count);
    reporter.dispose();
    expect(out.at(-1)).toBe(formatProgramStatus({ state: "clear" }));
  });

  it("sends nothing to a terminal whose device attributes come without an answer", () => {
    const store = new Store();
    const out: string[] = [];
    const reporter = new ProgramStatusReporter(store, (t) => out.push(t), {});
    expect(reporter.replies.filter("\x1b[?62;22c")).toBe("");
    expect(reporter.replies.expecting).toBe(false);
    store.act({ type: "agents", agents: [info("a", "busy")] });
    reporter.dispose();
    expect(out).toEqual([`${PROGRAM_STATUS_QUERY}\x1b[c`]);
  });

  it("reports at once with PI_PROGRAM_STATUS=1 and never with 0, as pi", () => {
    const store = new Store();
    store.act({ type: "agents", agents: [info("a", "idle")] });
    const on: string[] = [];
    new ProgramStatusReporter(store, (t) => on.push(t), { PI_PROGRAM_STATUS: "1" }).dispose();
    expect(on).toEqual([formatProgramStatus({ state: "idle" }), formatProgramStatus({ state: "clear" })]);
    const off: string[] = [];
    const r = new ProgramStatusReporter(store, (t) => off.push(t), { PI_PROGRAM_STATUS: "0" });
    expect(r.replies.filter("\x1b]7501;?\x1b\\")).toBe("\x1b]7501;?\x1b\\");
    r.dispose();
    expect(off).toEqual([]);
  });
});
