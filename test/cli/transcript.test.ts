import { describe, expect, it } from "vitest";
import { TranscriptRenderer } from "../../cli/commands/transcript.js";
import { colors } from "../../cli/context.js";
import type { IpcStreamMessage } from "../../shared/schema/ipc.js";

const render = (events: Record<string, unknown>[]): string => {
  let out = "";
  const r = new TranscriptRenderer({ write: (s) => (out += s), colors: colors(false) });
  events.forEach((event, i) => r.feed({ type: "event", agent: "a", seq: i + 1, event }));
  r.end();
  return out;
};

describe("TranscriptRenderer", () => {
  const table: { name: string; events: Record<string, unknown>[]; want: string }[] = [
    {
      name: "streamed text, then a line break at message_end",
      events: [
        { type: "message_update", assistantMessageEvent: { type: "text_delta", delta: "hi" } },
        { type: "message_end", message: { role: "assistant", stopReason: "stop" } },
      ],
      want: "hi\n",
    },
    { name: "a prompt", events: [{ type: "message_start", message: { role: "user", content: "go" } }], want: "> go\n" },
    {
      name: "a tool call and its collapsed result",
      events: [
        { type: "tool_execution_start", toolName: "bash", args: { command: "ls  -A" } },
        { type: "tool_execution_end", result: { content: [{ type: "text", text: "a\nb\n" }] }, isError: false },
      ],
      want: "⏺ bash(ls -A)\n  ⎿ a … (+1 lines)\n",
    },
    {
      name: "a model error",
      events: [
        { type: "message_end", message: { role: "assistant", stopReason: "error", errorMessage: "rate limited" } },
      ],
      want: "error: rate limited\n",
    },
    {
      name: "an extension error names its error",
      events: [{ type: "extension_error", extensionPath: "x.ts", event: "tool_call", error: "boom" }],
      want: "! extension error: boom\n",
    },
    {
      name: "a protocol error its message",
      events: [{ type: "protocol_error", message: "not JSON" }],
      want: "! protocol error: not JSON\n",
    },
    {
      name: "a worker exit",
      events: [{ type: "worker_exited", code: 1, signal: null, reason: "crash" }],
      want: "· worker exited (crash, code 1)\n",
    },
    { name: "an event it does not know prints nothing", events: [{ type: "something_new", x: 1 }], want: "" },
    {
      name: "a dialog asks; a notice is said; the other fire-and-forget requests print nothing",
      events: [
        { type: "extension_ui_request", id: "d", method: "confirm", title: "Delete?", message: "3 files" },
        { type: "extension_ui_request", id: "n", method: "notify", message: "hi" },
        { type: "extension_ui_request", id: "w", method: "notify", message: "disk low", notifyType: "warning" },
        { type: "extension_ui_request", id: "s", method: "setStatus", statusKey: "k", statusText: "busy" },
      ],
      want: "? asks (confirm): Delete?: 3 files\n· notice: hi\n· notice (warning): disk low\n",
    },
    {
      name: "a dialog dismissed by its extension",
      events: [{ type: "dialog_closed", id: "d", reason: "dismissed" }],
      want: "· dialog closed: the extension dismissed it\n",
    },
    {
      name: "a dialog past its own timeout",
      events: [{ type: "dialog_closed", id: "d", reason: "timeout" }],
      want: "· dialog closed: its timeout passed\n",
    },
    {
      name: "a dialog gone with its worker",
      events: [{ type: "dialog_closed", id: "d", reason: "worker_exited" }],
      want: "· dialog closed: the worker exited\n",
    },
    {
      name: "an answered dialog prints nothing",
      events: [{ type: "dialog_closed", id: "d", reason: "answered" }],
      want: "",
    },
    {
      name: "a dialog closed for a reason it does not know prints nothing",
      events: [{ type: "dialog_closed", id: "d", reason: "toString" }],
      want: "",
    },
    {
      name: "a command held while a dialog is open",
      events: [{ type: "rpc_waiting", command: "prompt", timeoutMs: 60000, dialogs: 1 }],
      want: "· prompt is past its 60000 ms timeout and waits while the worker waits on a dialog\n",
    },
  ];
  for (const c of table) it(c.name, () => expect(render(c.events)).toBe(c.want));
});

describe("TranscriptRenderer: lagged notices", () => {
  const show = (messages: IpcStreamMessage[]): string => {
    let out = "";
    const r = new TranscriptRenderer({ write: (s) => (out += s), colors: colors(false) });
    for (const m of messages) r.feed(m);
    r.end();
    return out;
  };
  const event = (seq: number): IpcStreamMessage => ({
    type: "event",
    agent: "a",
    seq,
    event: { type: "agent_status", previous: "idle", status: "busy" },
  });
  it.each([
    {
      name: "before any event: history not held",
      messages: [{ type: "lagged", agent: "a", from: 1, to: 4 } as const],
      want: "… skipped events 1-4 (no longer held by the supervisor; pi-orch logs a has them)\n",
    },
    {
      name: "after events: this client fell behind",
      messages: [event(1), { type: "lagged", agent: "a", from: 2, to: 9 } as const],
      want: "· idle → busy\n… skipped events 2-9 (this client fell behind)\n",
    },
    {
      name: "lost while the disk was full",
      messages: [event(1), { type: "lagged", agent: "a", from: 2, to: 9, reason: "not_logged" } as const],
      want: "· idle → busy\n… skipped events 2-9 (lost: the disk was full and their log lines were dropped; no log has them)\n",
    },
  ])("$name", ({ messages, want }) => expect(show(messages)).toBe(want));
});

describe("TranscriptRenderer: text across a gap", () => {
  const delta = (seq: number, text: string): IpcStreamMessage => ({
    type: "event",
    agent: "a",
    seq,
    event: { type: "message_update", assistantMessageEvent: { type: "text_delta", delta: text } },
  });
  const stream = (verbose: boolean) => {
    let out = "";
    const notes: string[] = [];
    const r = new TranscriptRenderer({
      write: (s) => (out += s),
      colors: colors(false),
      verbose,
      notice: (l) => notes.push(l),
    });
    const messages: IpcStreamMessage[] = [
      { type: "event", agent: "a", seq: 1, event: { type: "message_start", message: { role: "assistant" } } },
      delta(2, "one "),
      { type: "lagged", agent: "a", from: 3, to: 4, reason: "not_logged" },
      delta(5, "four "),
      {
        type: "event",
        agent: "a",
        seq: 6,
        event: {
          type: "message_end",
          message: { role: "assistant", stopReason: "stop", content: [{ type: "text", text: "one two three four " }] },
        },
      },
      { type: "event", agent: "a", seq: 7, event: { type: "message_start", message: { role: "assistant" } } },
      delta(8, "next"),
      {
        type: "event",
        agent: "a",
        seq: 9,
        event: { type: "message_end", message: { role: "assistant", stopReason: "stop", content: "next, ignored" } },
      },
    ];
    for (const m of messages) r.feed(m);
    r.end();
    return { out, notes };
  };
  const note = "… skipped events 3-4 (lost: the disk was full and their log lines were dropped; no log has them)";

  it("prints the message's whole text at its end, the note on the side when not verbose", () => {
    // The deltas after the gap wait for the end; only a message after a gap is completed from its end.
    expect(stream(false)).toEqual({ out: "one two three four \nnext\n", notes: [note] });
  });

  it("prints the note in the transcript when verbose", () => {
    expect(stream(true)).toEqual({ out: `one \n${note}\ntwo three four \nnext\n`, notes: [] });
  });
});
