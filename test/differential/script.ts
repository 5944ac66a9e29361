/**
 * The script both workers run: every RPC command pi 1.6.0 has (rpc-types.d.ts,
 * docs/rpc-commands.md), runs with text, a tool call and a streaming bash tool, a
 * streaming run that is steered, queued, cleared and aborted, retries, a compaction,
 * the differential extension's commands (an appended entry, a dialog, a throw), and the
 * bad-input lines. Each step waits only for events, never for time; a run is waited for
 * until `agent_settled`, when pi will do nothing more on its own.
 */
import type { Driver, Step } from "./harness.js";

const hello = { text: ["Hello ", "from the ", "mock model."], usage: { input: 10, output: 5 } };

const ask = (name: string, command: Record<string, unknown>): Step => ({
  name,
  run: async (d) => void (await d.send(command)),
});

/** Send a prompt and wait until the run settled. */
async function promptSettled(d: Driver, message: string): Promise<void> {
  await d.send({ type: "prompt", message });
  await d.event("agent_settled");
}

/** How many messages each model request of this step carried (what reached the model). */
function noteRequests(d: Driver): void {
  for (const body of d.requests()) d.note({ type: "__model_request__", messageCount: body.messages.length });
}

/** The steps, in order. */
export const SCRIPT: Step[] = [
  ask("get_state (fresh)", { type: "get_state" }),
  ask("get_available_models", { type: "get_available_models" }),
  ask("get_commands", { type: "get_commands" }),
  ask("get_available_thinking_levels (reasoning model)", { type: "get_available_thinking_levels" }),
  ask("get_entries (fresh)", { type: "get_entries" }),
  ask("get_tree (fresh)", { type: "get_tree" }),
  ask("set_session_name (white space)", { type: "set_session_name", name: "   " }),
  ask("set_session_name", { type: "set_session_name", name: "diff run" }),
  {
    name: "prompt (text reply)",
    run: async (d) => {
      d.replies(hello);
      await promptSettled(d, "say hello");
    },
  },
  ask("get_state (after a run)", { type: "get_state" }),
  ask("get_messages", { type: "get_messages" }),
  ask("get_last_assistant_text", { type: "get_last_assistant_text" }),
  ask("get_entries (after a run)", { type: "get_entries" }),
  {
    name: "get_entries since an entry",
    run: async (d) => {
      const entries = d.earlier.get("get_entries (after a run)")!.responses[0]!.data.entries as { id: string }[];
      await d.send({ type: "get_entries", since: entries.at(-2)!.id });
    },
  },
  ask("get_entries since an unknown entry", { type: "get_entries", since: "ffffffff" }),
  ask("get_tree (after a run)", { type: "get_tree" }),
  {
    name: "prompt (tool call)",
    run: async (d) => {
      d.replies(
        {
          toolCalls: [{ id: "call_1", name: "read", arguments: { path: "notes.txt" }, argChunks: 3 }],
          usage: { input: 20, output: 5 },
        },
        { text: "The file has two lines.", usage: { input: 30, output: 6 } },
      );
      await promptSettled(d, "read notes.txt");
    },
  },
  {
    name: "prompt (bash tool, streamed output)",
    run: async (d) => {
      d.replies(
        {
          toolCalls: [
            { id: "call_2", name: "bash", arguments: { command: "for i in 1 2 3; do echo line $i; sleep 0.2; done" } },
          ],
        },
        { text: "It printed one line." },
      );
      await promptSettled(d, "run echo");
    },
  },
  {
    name: "prompt (bash tool that fails)",
    run: async (d) => {
      d.replies(
        { toolCalls: [{ id: "call_3", name: "bash", arguments: { command: "echo oops; exit 3" } }] },
        { text: "It failed." },
      );
      await promptSettled(d, "run a failing command");
    },
  },
  ask("get_session_stats", { type: "get_session_stats" }),
  ask("set_thinking_level", { type: "set_thinking_level", level: "low" }),
  ask("cycle_thinking_level", { type: "cycle_thinking_level" }),
  ask("set_thinking_level max (model without max)", { type: "set_thinking_level", level: "max" }),
  ask("set_model (known)", { type: "set_model", provider: "mock", modelId: "mock-2" }),
  ask("get_available_thinking_levels (model without reasoning)", { type: "get_available_thinking_levels" }),
  ask("cycle_thinking_level (model without reasoning)", { type: "cycle_thinking_level" }),
  ask("set_model (unknown)", { type: "set_model", provider: "mock", modelId: "nope" }),
  ask("cycle_model", { type: "cycle_model" }),
  ask("get_state (after model changes)", { type: "get_state" }),
  ask("set_steering_mode", { type: "set_steering_mode", mode: "all" }),
  ask("set_follow_up_mode", { type: "set_follow_up_mode", mode: "one-at-a-time" }),
  ask("set_auto_compaction", { type: "set_auto_compaction", enabled: false }),
  ask("set_auto_retry", { type: "set_auto_retry", enabled: true }),
  ask("abort_retry (idle)", { type: "abort_retry" }),
  ask("bash (ANSI and CR)", { type: "bash", command: "printf 'plain \\033[31mred\\033[0m\\r\\nnext\\n'; exit 3" }),
  ask("bash (excludeFromContext)", { type: "bash", command: "echo hidden", excludeFromContext: true }),
  {
    name: "prompt after bash (what reaches the model)",
    run: async (d) => {
      d.replies({ text: "Seen." });
      await promptSettled(d, "what did the commands print?");
      noteRequests(d);
    },
  },
  ask("abort_bash (idle)", { type: "abort_bash" }),
  {
    name: "extension command appending an entry",
    run: async (d) => {
      await d.send({ type: "prompt", message: "/note remember this" });
      await d.event("entry_appended");
    },
  },
  {
    name: "extension command with a dialog",
    run: async (d) => {
      const answered = d.send({ type: "prompt", message: "/ask" });
      const request = await d.event("extension_ui_request", (e) => e.method === "confirm");
      d.write({ type: "extension_ui_response", id: request.id, confirmed: true });
      await answered;
      await d.event("extension_ui_request", (e) => e.method === "notify");
    },
  },
  {
    name: "extension command that throws",
    run: async (d) => {
      await d.send({ type: "prompt", message: "/boom" });
      await d.event("extension_error");
    },
  },
  {
    name: "streaming: steer, follow_up, clear_queue, abort",
    timed: true,
    run: async (d) => {
      d.replies({ text: ["one ", "two ", "three ", "four ", "five"], chunkDelayMs: 150 });
      await d.send({ type: "prompt", message: "count slowly" });
      await d.event("message_update");
      await d.send({ type: "steer", message: "steer this" });
      await d.send({ type: "follow_up", message: "then this" });
      await d.send({ type: "clear_queue" });
      await d.send({ type: "abort" });
      await d.event("agent_settled");
    },
  },
  {
    name: "streaming: steer, follow_up, prompt without behaviour, abort",
    timed: true,
    run: async (d) => {
      d.replies(
        { text: ["one ", "two ", "three ", "four ", "five"], chunkDelayMs: 150 },
        { text: "after steer" },
        { text: "after follow-up" },
        { text: "after the queued prompt" },
      );
      await d.send({ type: "prompt", message: "count slowly" });
      await d.event("message_update");
      await d.send({ type: "steer", message: "steer this" });
      await d.send({ type: "follow_up", message: "then this" });
      await d.send({ type: "prompt", message: "no behaviour" });
      await d.send({ type: "prompt", message: "queued as follow-up", streamingBehavior: "followUp" });
      await d.send({ type: "abort" });
      await d.event("agent_settled");
    },
  },
  ask("clear_queue (what the abort left queued)", { type: "clear_queue" }),
  ask("clear_queue (nothing queued)", { type: "clear_queue" }),
  {
    name: "abort_retry during the retry wait",
    run: async (d) => {
      d.replies({ error: { status: 503, message: "overloaded" } }, { text: "never sent" });
      await d.send({ type: "prompt", message: "this request fails once" });
      await d.event("auto_retry_start");
      await d.send({ type: "abort_retry" });
      await d.event("agent_settled");
    },
  },
  {
    name: "automatic retry after a 503",
    run: async (d) => {
      d.replies({ error: { status: 503, message: "overloaded" } }, { text: "second time lucky" });
      await promptSettled(d, "this request fails once, then works");
    },
  },
  {
    name: "compact",
    run: async (d) => {
      // A cut inside a turn takes two summary requests (the history and the turn's prefix).
      const summary = { text: "## Goal\nSummary of the conversation.", usage: { input: 40, output: 8 } };
      d.replies(summary, summary);
      await d.send({ type: "compact", customInstructions: "keep it short" });
    },
  },
  ask("get_state (after compact)", { type: "get_state" }),
  ask("get_fork_messages", { type: "get_fork_messages" }),
  {
    name: "fork",
    run: async (d) => {
      const forks = d.earlier.get("get_fork_messages")!.responses[0]!.data.messages as { entryId: string }[];
      await d.send({ type: "fork", entryId: forks[0]!.entryId });
    },
  },
  ask("fork (unknown entry)", { type: "fork", entryId: "ffffffff" }),
  ask("clone", { type: "clone" }),
  ask("export_html", { type: "export_html" }),
  ask("new_session", { type: "new_session" }),
  {
    name: "switch_session",
    run: async (d) => {
      const state = d.earlier.get("get_state (after a run)")!.responses[0]!.data as { sessionFile: string };
      await d.send({ type: "switch_session", sessionPath: state.sessionFile });
    },
  },
  ask("get_state (after switch)", { type: "get_state" }),
  {
    name: "switch_session (missing file)",
    run: async (d) => void (await d.send({ type: "switch_session", sessionPath: `${d.dirs.sessions}/missing.jsonl` })),
  },
  ask("get_state (after the missing file)", { type: "get_state" }),
  {
    name: "navigate_tree with a summary (our addition)",
    run: async (d) => {
      const forks = d.earlier.get("get_fork_messages")!.responses[0]!.data.messages as { entryId: string }[];
      d.replies({ text: "## Goal\nThe branch that was left." });
      await d.send({ type: "navigate_tree", targetId: forks[0]!.entryId, summarize: true, label: "back to the start" });
    },
  },
  { name: "bad: not JSON", run: async (d) => void (await d.raw("this is not json")) },
  ask("bad: unknown type", { type: "no_such_command" }),
  ask("bad: type constructor", { type: "constructor" }),
  ask("bad: type toString", { type: "toString" }),
  ask("bad: prompt without message", { type: "prompt" }),
  ask("bad: wrong thinking level", { type: "set_thinking_level", level: "huge" }),
];

/** The script of a worker without a session file (`--no-session`): the session commands answer from memory. */
export const NO_SESSION_SCRIPT: Step[] = [
  ask("--no-session: get_tree (fresh)", { type: "get_tree" }),
  ask("--no-session: get_entries (fresh)", { type: "get_entries" }),
  {
    name: "--no-session: prompt",
    run: async (d) => {
      d.replies(hello);
      await promptSettled(d, "say hello");
    },
  },
  ask("--no-session: get_tree", { type: "get_tree" }),
  ask("--no-session: get_entries", { type: "get_entries" }),
  ask("--no-session: get_state", { type: "get_state" }),
  ask("--no-session: export_html", { type: "export_html" }),
];
