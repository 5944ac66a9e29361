/**
 * The script both workers run: every RPC command pi 0.73.1 has (docs/rpc.md), a run
 * with text, one with a tool call, a streaming run that is steered, queued and aborted,
 * and the bad-input lines. Each step waits only for events, never for time.
 */
import type { Step } from "./harness.js";

const hello = { text: ["Hello ", "from the ", "mock model."], usage: { input: 10, output: 5 } };

/** The steps, in order. */
export const SCRIPT: Step[] = [
  { name: "get_state (fresh)", run: async (d) => void (await d.send({ type: "get_state" })) },
  { name: "get_available_models", run: async (d) => void (await d.send({ type: "get_available_models" })) },
  { name: "get_commands", run: async (d) => void (await d.send({ type: "get_commands" })) },
  {
    name: "set_session_name (white space)",
    run: async (d) => void (await d.send({ type: "set_session_name", name: "   " })),
  },
  { name: "set_session_name", run: async (d) => void (await d.send({ type: "set_session_name", name: "diff run" })) },
  {
    name: "prompt (text reply)",
    run: async (d) => {
      d.replies(hello);
      await d.send({ type: "prompt", message: "say hello" });
      await d.event("agent_end");
    },
  },
  { name: "get_state (after a run)", run: async (d) => void (await d.send({ type: "get_state" })) },
  { name: "get_messages", run: async (d) => void (await d.send({ type: "get_messages" })) },
  { name: "get_last_assistant_text", run: async (d) => void (await d.send({ type: "get_last_assistant_text" })) },
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
      await d.send({ type: "prompt", message: "read notes.txt" });
      await d.event("agent_end");
    },
  },
  { name: "get_session_stats", run: async (d) => void (await d.send({ type: "get_session_stats" })) },
  { name: "set_thinking_level", run: async (d) => void (await d.send({ type: "set_thinking_level", level: "low" })) },
  { name: "cycle_thinking_level", run: async (d) => void (await d.send({ type: "cycle_thinking_level" })) },
  {
    name: "set_model (known)",
    run: async (d) => void (await d.send({ type: "set_model", provider: "mock", modelId: "mock-2" })),
  },
  {
    name: "set_model (unknown)",
    run: async (d) => void (await d.send({ type: "set_model", provider: "mock", modelId: "nope" })),
  },
  { name: "cycle_model", run: async (d) => void (await d.send({ type: "cycle_model" })) },
  { name: "get_state (after model changes)", run: async (d) => void (await d.send({ type: "get_state" })) },
  { name: "set_steering_mode", run: async (d) => void (await d.send({ type: "set_steering_mode", mode: "all" })) },
  {
    name: "set_follow_up_mode",
    run: async (d) => void (await d.send({ type: "set_follow_up_mode", mode: "one-at-a-time" })),
  },
  {
    name: "set_auto_compaction",
    run: async (d) => void (await d.send({ type: "set_auto_compaction", enabled: false })),
  },
  { name: "set_auto_retry", run: async (d) => void (await d.send({ type: "set_auto_retry", enabled: true })) },
  { name: "abort_retry (idle)", run: async (d) => void (await d.send({ type: "abort_retry" })) },
  {
    name: "bash (ANSI and CR)",
    run: async (d) =>
      void (await d.send({ type: "bash", command: "printf 'plain \\033[31mred\\033[0m\\r\\nnext\\n'; exit 3" })),
  },
  { name: "abort_bash (idle)", run: async (d) => void (await d.send({ type: "abort_bash" })) },
  {
    name: "streaming: steer, follow_up, prompt without behaviour, abort",
    run: async (d) => {
      d.replies(
        { text: ["one ", "two ", "three ", "four ", "five"], chunkDelayMs: 150 },
        { text: "after steer" },
        { text: "after follow-up" },
      );
      await d.send({ type: "prompt", message: "count slowly" });
      await d.event("message_update");
      await d.send({ type: "steer", message: "steer this" });
      await d.send({ type: "follow_up", message: "then this" });
      await d.send({ type: "prompt", message: "no behaviour" });
      await d.send({ type: "prompt", message: "queued as follow-up", streamingBehavior: "followUp" });
      await d.send({ type: "abort" });
      await d.event("agent_end");
    },
  },
  {
    name: "abort_retry during the retry wait",
    run: async (d) => {
      d.replies({ error: { status: 503, message: "overloaded" } }, { text: "never sent" });
      await d.send({ type: "prompt", message: "this request fails once" });
      await d.event("auto_retry_start");
      await d.send({ type: "abort_retry" });
      await d.event("agent_end");
    },
  },
  {
    name: "automatic retry after a 503",
    run: async (d) => {
      // The retry run also delivers the two follow-ups still queued from the streaming step (a failed run leaves them queued).
      d.replies(
        { error: { status: 503, message: "overloaded" } },
        { text: "second time lucky" },
        { text: "follow-up one" },
        { text: "follow-up two" },
      );
      await d.send({ type: "prompt", message: "this request fails once, then works" });
      // The retry is a run of its own: its agent_end is the one with the answer.
      await d.event("agent_end", (e) => (e.messages as { stopReason?: string }[]).some((m) => m.stopReason === "stop"));
    },
  },
  { name: "get_fork_messages", run: async (d) => void (await d.send({ type: "get_fork_messages" })) },
  {
    name: "fork",
    run: async (d) => {
      const forks = d.earlier.get("get_fork_messages")!.responses[0]!.data.messages as { entryId: string }[];
      await d.send({ type: "fork", entryId: forks[0]!.entryId });
    },
  },
  { name: "fork (unknown entry)", run: async (d) => void (await d.send({ type: "fork", entryId: "ffffffff" })) },
  { name: "clone", run: async (d) => void (await d.send({ type: "clone" })) },
  {
    name: "compact",
    run: async (d) => {
      d.replies({ text: "## Goal\nSummary of the conversation." });
      await d.send({ type: "compact", customInstructions: "keep it short" });
    },
  },
  {
    name: "export_html",
    run: async (d) => void (await d.send({ type: "export_html", outputPath: `${d.dirs.cwd}/out.html` })),
  },
  { name: "new_session", run: async (d) => void (await d.send({ type: "new_session" })) },
  {
    name: "switch_session",
    run: async (d) => {
      const state = d.earlier.get("get_state (after a run)")!.responses[0]!.data as { sessionFile: string };
      await d.send({ type: "switch_session", sessionPath: state.sessionFile });
    },
  },
  { name: "get_state (after switch)", run: async (d) => void (await d.send({ type: "get_state" })) },
  { name: "get_tree (our addition)", run: async (d) => void (await d.send({ type: "get_tree" })) },
  {
    name: "navigate_tree with a summary (our addition)",
    run: async (d) => {
      const forks = d.earlier.get("get_fork_messages")!.responses[0]!.data.messages as { entryId: string }[];
      d.replies({ text: "## Goal\nThe branch that was left." });
      await d.send({ type: "navigate_tree", targetId: forks[0]!.entryId, summarize: true, label: "back to the start" });
    },
  },
  { name: "bad: not JSON", run: async (d) => void (await d.raw("this is not json")) },
  { name: "bad: unknown type", run: async (d) => void (await d.send({ type: "no_such_command" })) },
  { name: "bad: type constructor", run: async (d) => void (await d.send({ type: "constructor" })) },
  { name: "bad: type toString", run: async (d) => void (await d.send({ type: "toString" })) },
  { name: "bad: prompt without message", run: async (d) => void (await d.send({ type: "prompt" })) },
  {
    name: "bad: wrong thinking level",
    run: async (d) => void (await d.send({ type: "set_thinking_level", level: "huge" })),
  },
];
