/**
 * Every place where our RPC mode answers differently from pi 0.73.1 on purpose, with
 * the reason (DELIBERATE), and the differences not closed yet, with what is missing
 * (OPEN). The differential suite fails on any difference listed in neither, and on an
 * entry that no longer matches anything (so neither list can go stale: a fixed OPEN
 * entry must be removed).
 */
import type { Deliberate } from "./compare.js";

const STATE_EXTRAS =
  "get_state also reports cwd, the active tools and the ids of the dialogs waiting for an answer (pi tells no client when an extension's signal dismisses one): pi-orch's supervisor and TUI use them; extra keys break no pi client";
const ID_ECHO =
  "we echo the request id on an unknown command (pi drops it), so a client waiting on that id gets its answer";
const STREAM_SNAPSHOT =
  "pi writes a streaming event after later chunks have already changed its partial message, so its early deltas show arguments (and a stopReason) that arrive later; ours show what had arrived when the delta did";
const DELAY_REASON = "auto_retry_start says why this delay was chosen (the server's retry-after, or the backoff)";
const PROMPT_RUNNING =
  "our prompt answer adds data: {running}, whether a run is going so its agent_end follows (false after an extension command that started none); pi's answer has no data and its RpcClient ignores the answer's fields";
const STREAM_INDEX =
  "pi-ai's internal streamIndex leaks into pi's streaming tool calls; rpc.md does not have it and contentIndex carries the same";

/** The deliberate differences, by step and path prefix. */
export const DELIBERATE: Deliberate[] = [
  ...[
    "get_state (fresh)",
    "get_state (after a run)",
    "get_state (after model changes)",
    "get_state (after switch)",
  ].flatMap((step) => [
    { step, path: "responses/0/data/cwd", reason: STATE_EXTRAS },
    { step, path: "responses/0/data/tools", reason: STATE_EXTRAS },
    { step, path: "responses/0/data/openDialogs", reason: STATE_EXTRAS },
  ]),
  ...[5, 6, 7, 8, 9].flatMap((i) => [
    {
      step: "prompt (tool call)",
      path: `events/${i}/assistantMessageEvent/partial/content/0/streamIndex`,
      reason: STREAM_INDEX,
    },
    { step: "prompt (tool call)", path: `events/${i}/message/content/0/streamIndex`, reason: STREAM_INDEX },
  ]),
  ...[6, 7].flatMap((i) => [
    {
      step: "prompt (tool call)",
      path: `events/${i}/assistantMessageEvent/partial/content/0/arguments`,
      reason: STREAM_SNAPSHOT,
    },
    { step: "prompt (tool call)", path: `events/${i}/message/content/0/arguments`, reason: STREAM_SNAPSHOT },
  ]),
  { step: "prompt (tool call)", path: "events/9/assistantMessageEvent/partial/stopReason", reason: STREAM_SNAPSHOT },
  {
    step: "fork (unknown entry)",
    path: "responses/0/error",
    reason:
      "our error names the session file and says what to do next (get_fork_messages lists the entries); both fail the same way",
  },
  {
    step: "clone",
    path: "responses/0",
    reason:
      'pi 0.73.1 fails a clone right after a fork ("Entry … not found": the forked file is not on disk before the first reply); ours clones it',
  },
  {
    step: "compact",
    path: "responses/0",
    reason:
      "with every message inside the kept part there is nothing to summarize: pi still calls the model and records a compaction that replaces nothing (tokensBefore 0); we refuse and say why",
  },
  { step: "compact", path: "events", reason: "no compaction runs (see the response), so no compaction_start/end" },
  {
    step: "export_html",
    path: "responses/0",
    reason:
      "pi cannot export a session whose file is not on disk yet (a clone before its first reply); our session file exists from the start",
  },
  ...["bad: unknown type", "bad: type constructor", "bad: type toString"].map((step) => ({
    step,
    path: "responses/0/id",
    reason: ID_ECHO,
  })),
  {
    step: "bad: prompt without message",
    path: "responses/0/error",
    reason: "we validate every command against its schema and name the missing field; pi fails inside with a TypeError",
  },
  {
    step: "bad: wrong thinking level",
    path: "responses/0",
    reason: 'an unknown level is refused with the field named; pi accepts it and silently sets "off"',
  },
  {
    step: "bad: wrong thinking level",
    path: "events",
    reason: "the level is refused (see the response), so it does not change",
  },
  ...[
    ["abort_retry during the retry wait", 11],
    ["automatic retry after a 503", 8],
  ].map(([step, i]) => ({ step: String(step), path: `events/${i}/delayReason`, reason: DELAY_REASON })),
  ...[
    ["abort_retry during the retry wait", 10],
    ["automatic retry after a 503", 7],
  ].map(([step, i]) => ({
    step: String(step),
    path: `events/${i}/willRetry`,
    reason:
      "an agent_end followed by an automatic retry says willRetry: true, so a client knows the prompt is not done (pi's clients cannot tell a retried run from a finished one)",
  })),
  ...[
    ["prompt (text reply)", 0],
    ["prompt (tool call)", 0],
    ["streaming: steer, follow_up, prompt without behaviour, abort", 0],
    ["streaming: steer, follow_up, prompt without behaviour, abort", 4],
    ["abort_retry during the retry wait", 0],
    ["automatic retry after a 503", 0],
  ].map(([step, i]) => ({ step: String(step), path: `responses/${i}/data`, reason: PROMPT_RUNNING })),
  ...["get_tree (our addition)", "navigate_tree with a summary (our addition)"].flatMap((step) => [
    {
      step,
      path: "responses/0",
      reason: "our documented addition: pi 0.73 has no RPC for its session tree (it answers Unknown command)",
    },
  ]),
];

/** Differences not closed yet: none. A new one is listed here with what is missing. */
export const OPEN: Deliberate[] = [];

/**
 * Where pi's example extensions, run on both (pi-examples-oracle-commands.test.ts), show a
 * difference that is kept, with the reason; that test applies each one by name, so a
 * difference not listed here fails it.
 */
export const EXAMPLE_DIFFERENCES = {
  themeColours: {
    what: "ctx.ui.theme.fg/bg in RPC mode: pi's returns the text wrapped in truecolor (or 256-colour) ANSI escapes, ours the text alone",
    reason:
      "a status line or widget travels to clients that are not a terminal (pi-orch list --json, the supervisor's event log, the TUI's panes, which style it themselves); plain text reads the same everywhere and honours NO_COLOR",
  },
  promptWrittenOnAccept: {
    what: "an entry an extension appends in a run's agent_start or turn_start handler (preset's preset-state) follows that run's prompt in the session file; pi writes it before",
    reason:
      "a prompt is written when it is accepted, so a prompt the disk refuses is refused and not lost (FAULTS.md); pi writes the prompt at its message_end",
  },
} as const;
