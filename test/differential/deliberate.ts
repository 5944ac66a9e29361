/**
 * Every place where our RPC mode answers differently from pi 1.6.0 on purpose, with the
 * reason (DELIBERATE), and the differences not closed yet, with what is missing and
 * where it is tracked (OPEN). The differential suite fails on any difference listed in
 * neither, and on an entry that no longer matches anything (so neither list can go
 * stale: a fixed OPEN entry must be removed). A path's `*` segment matches any one.
 */
import type { Deliberate } from "./compare.js";

const STATE_EXTRAS =
  "get_state also reports cwd, the active tools and the ids of the dialogs waiting for an answer (pi tells no client when an extension's signal dismisses one): pi-orch's supervisor and TUI use them; extra keys break no pi client (RpcClient reads the fields it knows)";
const PROMPT_RUNNING =
  "our prompt answer adds `running` beside pi's `disposition`: whether a run is going when the answer leaves, so its agent_settled follows; it also covers an extension command that started a run of its own (pi: `handled`, and a client cannot tell that a run is coming); RpcClient reads only `disposition`";
const STREAM_SNAPSHOT =
  "pi writes a streaming event after later chunks have already changed its message, so its early message_update shows the usage that arrives with the last chunk (reasoning, totalFromProvider); ours shows the usage as it was when the delta came";
const EMPTY_SESSION =
  "after a fork at the first prompt the session holds no message: pi 1.6 refuses to clone or export it until its first reply is written; our session file exists from the start, so both work";

const STATE_STEPS = [
  "get_state (fresh)",
  "get_state (after a run)",
  "get_state (after model changes)",
  "get_state (after compact)",
  "get_state (after switch)",
  "get_state (after the missing file)",
  "--no-session: get_state",
];

const PROMPT_STEPS: [string, number[]][] = [
  ["prompt (text reply)", [0]],
  ["prompt (tool call)", [0]],
  ["prompt (bash tool, streamed output)", [0]],
  ["prompt (bash tool that fails)", [0]],
  ["prompt after bash (what reaches the model)", [0]],
  ["extension command appending an entry", [0]],
  ["extension command with a dialog", [0]],
  ["extension command that throws", [0]],
  ["streaming: steer, follow_up, clear_queue, abort", [0]],
  ["streaming: steer, follow_up, prompt without behaviour, abort", [0, 4]],
  ["abort_retry during the retry wait", [0]],
  ["automatic retry after a 503", [0]],
  ["--no-session: prompt", [0]],
];

const OWN_PROMPT =
  "the system message's sections have pi 1.6's names, order and tags, in our own words; pi's also has a `docs` section pointing the model at pi's own documentation, which this package does not ship";
const NO_CONSTRAINED_SAMPLING =
  "our built-in tools declare no `constrainedSampling` grammar (no provider of ours asks for constrained sampling); their parameter schemas are pi 1.6's";

/** Where the session's first system message stands in each step's records, by step. */
const SYSTEM_MESSAGE_AT: [string, string][] = [
  ...["prompt (text reply)", "--no-session: prompt"].flatMap((step): [string, string][] => [
    [step, "events/*/message"],
    [step, "events/*/messages/*"],
  ]),
  ["get_messages", "responses/0/data/messages/*"],
  ["get_entries (after a run)", "responses/0/data/entries/*/message"],
  ["--no-session: get_entries", "responses/0/data/entries/*/message"],
  ["get_tree (after a run)", "responses/0/data/tree/*/children/*/children/*/children/*/entry/message"],
  ["--no-session: get_tree", "responses/0/data/tree/*/children/*/children/*/entry/message"],
];

/** The deliberate differences, by step and path prefix. */
export const DELIBERATE: Deliberate[] = [
  ...STATE_STEPS.flatMap((step) =>
    ["cwd", "tools", "openDialogs"].map((key) => ({ step, path: `responses/0/data/${key}`, reason: STATE_EXTRAS })),
  ),
  ...PROMPT_STEPS.flatMap(([step, at]) =>
    at.map((i) => ({ step, path: `responses/${i}/data/running`, reason: PROMPT_RUNNING })),
  ),
  ...[
    "prompt (tool call)",
    "prompt (bash tool, streamed output)",
    "prompt (bash tool that fails)",
    "prompt after bash (what reaches the model)",
    "prompt (text reply)",
    "--no-session: prompt",
    "automatic retry after a 503",
  ].map((step) => ({ step, path: "events/*/usage", reason: STREAM_SNAPSHOT })),
  ...SYSTEM_MESSAGE_AT.flatMap(([step, at]) =>
    ["sections/docs", "toolsAdded/*/constrainedSampling"].map((field) => ({
      step,
      path: `${at}/${field}`,
      reason: field === "sections/docs" ? OWN_PROMPT : NO_CONSTRAINED_SAMPLING,
    })),
  ),
  ...[
    ["abort_retry during the retry wait", 8],
    ["automatic retry after a 503", 8],
  ].map(([step, i]) => ({
    step: String(step),
    path: `events/${i}/delayReason`,
    reason: "auto_retry_start says why this delay was chosen (the server's retry-after, or the backoff)",
  })),
  {
    step: "fork (unknown entry)",
    path: "responses/0/error",
    reason:
      "our error names the session file and says what to do next (get_fork_messages lists the entries); both fail the same way",
  },
  { step: "clone", path: "responses/0", reason: EMPTY_SESSION },
  { step: "export_html", path: "responses/0", reason: EMPTY_SESSION },
  {
    step: "navigate_tree with a summary (our addition)",
    path: "responses/0",
    reason:
      "our documented addition: pi 1.6 has navigateTree for extensions only (over RPC it answers Unknown command)",
  },
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
];

const BUILT_IN_COMMANDS =
  'issue 26 (MCP, pi packages): pi 1.6 ships the built-in extension commands /mcp and /llama; ours has neither. And pi says source "cli" (no baseDir) for an extension loaded with -e, where our loader does not tell the session which paths came from the command line';

/** Differences not closed yet, each with what is missing and where it is tracked. */
export const OPEN: Deliberate[] = [
  { step: "get_commands", path: "responses/0/data/commands", reason: BUILT_IN_COMMANDS },
];

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
