/**
 * Prefix stability: how often a model request starts with the previous request's messages,
 * byte for byte, so a provider's prompt cache still holds it. One scripted session on the
 * mock model server, run by our worker and by upstream pi 1.6.0 (`pi --mode rpc`, Node 22,
 * where test/upstream has it): tool calls, a tool removed and one added back by an
 * extension, a new tool, a retried 503, a manual compaction, a fork and a branch switch with a summary.
 * Summary requests (compaction, branch) are asides and not counted. Run twice: with the
 * model as a models.json declares it by default (later system messages folded into the
 * leading one, as both do for a server not known to take them), and with
 * `compat.supportsMidConvoSystemMessages` / `supportsMidConvoToolAdditions` set.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startMockModelServer, type MockModelServer, type MockReply } from "../test/support/mock-model-server.js";
import { killAllWorkers, tempDir, type RpcWorker } from "../test/support/rpc-worker.js";
import { toolChangeExtension } from "../test/support/tool-change-extension.js";
import {
  mockModelsJson,
  startOracle,
  UPSTREAM,
  type Implementation,
  type TempDir,
} from "../test/support/upstream-oracle.js";
import { fmt, table } from "./stats.js";

type Json = Record<string, any>;

const COMMANDS =
  toolChangeExtension(`  pi.registerCommand("add-bash", { description: "add bash back", handler: async () => pi.setActiveTools(["read", "bash"]) });
  pi.registerCommand("goto", {
    description: "go to an entry, summarizing the branch left",
    handler: async (args, ctx) => { await ctx.navigateTree(args.trim(), { summarize: true }); },
  });
`);

/** One step of the script: what happens before the requests it causes, and the replies they get. */
interface Step {
  label: string;
  act: (w: RpcWorker) => Promise<void>;
  replies: MockReply[];
}

const readCall = (id: string): MockReply => ({
  toolCalls: [{ id, name: "read", arguments: { path: "notes.txt" } }],
});

async function prompt(w: RpcWorker, message: string): Promise<void> {
  const from = w.received.length;
  const res = await w.request({ type: "prompt", message }, 60_000);
  if (!res.success) throw new Error(`prompt "${message}" refused: ${JSON.stringify(res)}`);
  await w.event("agent_settled", 60_000, from);
}

async function command(w: RpcWorker, message: string): Promise<void> {
  const res = await w.request({ type: "prompt", message }, 60_000);
  if (!res.success) throw new Error(`command "${message}" refused: ${JSON.stringify(res)}`);
}

const SCRIPT: Step[] = [
  {
    label: "first prompt (a read, then the answer)",
    act: (w) => prompt(w, "first"),
    replies: [readCall("c1"), { text: "one" }],
  },
  { label: "next prompt", act: (w) => prompt(w, "second"), replies: [{ text: "two" }] },
  {
    label: "after removing bash, edit, write",
    act: async (w) => {
      await command(w, "/only-read");
      await prompt(w, "third");
    },
    replies: [readCall("c2"), { text: "three" }],
  },
  {
    label: "a 503, then its retry",
    act: (w) => prompt(w, "fourth"),
    replies: [{ error: { status: 503, message: "Service Unavailable" } }, { text: "four" }],
  },
  {
    label: "after adding bash back",
    act: async (w) => {
      await command(w, "/add-bash");
      await prompt(w, "fifth");
    },
    replies: [{ text: "five" }],
  },
  {
    label: "after an extension adds a new tool",
    act: async (w) => {
      await command(w, "/add-hello");
      await prompt(w, "fifth again");
    },
    replies: [{ text: "five again" }],
  },
  {
    label: "after a compaction",
    act: async (w) => {
      const res = await w.request({ type: "compact" }, 60_000);
      if (!res.success) throw new Error(`compact refused: ${JSON.stringify(res)}`);
      await prompt(w, "sixth");
    },
    replies: [{ text: "## Summary\nearlier work" }, { text: "six" }],
  },
  { label: "next prompt", act: (w) => prompt(w, "seventh"), replies: [{ text: "seven" }] },
  {
    label: "after a fork at the last prompt",
    act: async (w) => {
      const forks = (await w.request({ type: "get_fork_messages" })).data.messages as Json[];
      const at = forks.find((m) => m.text === "seventh");
      const res = await w.request({ type: "fork", entryId: at?.entryId }, 60_000);
      if (!res.success) throw new Error(`fork refused: ${JSON.stringify(res)}`);
      await prompt(w, "eighth");
    },
    replies: [{ text: "eight" }],
  },
  {
    label: "after a branch switch to before the compaction",
    act: async (w) => {
      const entries = (await w.request({ type: "get_entries" })).data.entries as Json[];
      const two = entries.find(
        (e) => e.type === "message" && e.message.role === "assistant" && textOf(e.message) === "two",
      );
      await command(w, `/goto ${two?.id}`);
      await prompt(w, "ninth");
    },
    replies: [{ text: "## Branch\nleft" }, { text: "nine" }],
  },
  { label: "next prompt", act: (w) => prompt(w, "tenth"), replies: [{ text: "ten" }] },
];

function textOf(message: Json): string {
  const c = message.content;
  return typeof c === "string" ? c : (c as Json[]).map((b) => b.text ?? "").join("");
}

/** A conversation request (summary requests carry no tools), with the step that caused it. */
interface Sent {
  step: string;
  messages: string[];
  tools: string;
}

/** One configuration: the mock model with a compat, or a catalogue model (`provider/id`) re-aimed at the mock. */
interface Config {
  name: string;
  compat?: object;
  model?: string;
}

/**
 * A request's conversation, one string per item, and its tool declarations, in any of the
 * three APIs. Anthropic's system prompt leads the conversation (it is cached with it), and
 * its cache breakpoints are left out: they move to the newest message by design and are not
 * part of what the cache matches.
 */
function conversation(body: Json): { messages: string[]; tools: string } {
  const strip = (value: unknown) =>
    JSON.stringify(value, (key, v) => (key === "cache_control" ? undefined : (v as unknown)));
  if (body.input)
    return { messages: (body.input as Json[]).map((m) => JSON.stringify(m)), tools: JSON.stringify(body.tools) };
  const system = body.system === undefined ? [] : [strip(body.system)];
  return { messages: [...system, ...(body.messages as Json[]).map(strip)], tools: strip(body.tools) };
}

async function runSide(
  impl: Implementation,
  server: MockModelServer,
  dirs: TempDir[],
  extension: string,
  config: Config,
): Promise<Sent[]> {
  const [provider, id] = config.model?.split("/") ?? [];
  const { w, project } = startOracle(impl, server, dirs, {
    pi: "1.6.0",
    sessions: true,
    args: ["-e", extension, ...(provider && id ? ["--provider", provider, "--model", id] : [])],
    // As the tests run it: the sandbox would hide PI_ORCH_HOME, the agent dir with models.json.
    env: { PI_ORCH_SANDBOX: "off", OPENAI_API_KEY: "o", ANTHROPIC_API_KEY: "a" },
    prepare: (home) => {
      writeFileSync(
        join(home, "settings.json"),
        JSON.stringify({ retry: { baseDelayMs: 10 }, compaction: { keepRecentTokens: 40 } }),
      );
      const models = mockModelsJson(server) as Json;
      if (config.compat) models.providers.mock.models[0].compat = config.compat;
      // The built-in providers' models, re-aimed at the mock (pi's baseUrl override).
      models.providers.openai = { baseUrl: `${server.url}/v1` };
      models.providers.anthropic = { baseUrl: server.url };
      writeFileSync(join(home, "models.json"), JSON.stringify(models));
    },
  });
  writeFileSync(join(project, "notes.txt"), "notes\n");
  const sent: Sent[] = [];
  try {
    for (const step of SCRIPT) {
      const at = server.requests.length;
      server.enqueue(...step.replies);
      await step.act(w);
      // Each request took the next reply: a summary's ("## ...") request is an aside, not counted.
      server.requests.slice(at).forEach((r, i) => {
        const reply = step.replies[i] as { text?: string } | undefined;
        if (reply?.text?.startsWith("## ")) return;
        sent.push({ step: step.label, ...conversation(r.body as Json) });
      });
    }
  } finally {
    await killAllWorkers();
  }
  return sent;
}

/** Whether `cur` starts with every message of `prev`, each the same to the byte. */
const keepsMessages = (prev: Sent, cur: Sent): boolean =>
  prev.messages.length <= cur.messages.length && prev.messages.every((m, i) => cur.messages[i] === m);

interface Figures {
  requests: number;
  messages: number;
  whole: number;
  breaks: string[];
}

function figures(sent: Sent[]): Figures {
  let messages = 0;
  let whole = 0;
  const breaks: string[] = [];
  for (let i = 1; i < sent.length; i++) {
    const kept = keepsMessages(sent[i - 1]!, sent[i]!);
    const tools = sent[i - 1]!.tools === sent[i]!.tools;
    if (kept) messages++;
    if (kept && tools) whole++;
    else breaks.push(`${sent[i]!.step}${kept ? " (tools)" : ""}`);
  }
  return { requests: sent.length - 1, messages, whole, breaks };
}

const pct = (n: number, of: number) => `${n}/${of} (${fmt((100 * n) / of, 0)} %)`;

/** Whether each configuration's "ours" row keeps at least as many prefixes as the pi 1.6.0 row after it. */
function verdict(rows: (string | number)[][]): string {
  const share = (cell: string | number) => Number(String(cell).split("/")[0]);
  for (let i = 0; i + 1 < rows.length; i += 2) {
    const [ours, pi] = [rows[i]!, rows[i + 1]!];
    if (share(ours[3]!) < share(pi[3]!) || share(ours[4]!) < share(pi[4]!)) return `not met (${ours[0]})`;
  }
  return "met";
}

/** The bench section. */
export async function run(): Promise<string> {
  const out: string[] = ["## Prefix stability (the session is the context)", ""];
  if (!UPSTREAM["1.6.0"].installed) {
    out.push("Upstream pi 1.6.0 (test/upstream) is not installed, so this section has no figures.");
    return out.join("\n");
  }
  const server = await startMockModelServer();
  const dirs: TempDir[] = [];
  const ext = tempDir("pi-bench-prefix-ext-");
  dirs.push(ext);
  const extension = join(ext.path, "commands.ts");
  writeFileSync(extension, COMMANDS);
  const rows: (string | number)[][] = [];
  const breaks: string[] = [];
  try {
    const configs: Config[] = [
      { name: "Chat Completions, default (later system messages folded)" },
      {
        name: "Chat Completions, `supportsMidConvoSystemMessages` + `supportsMidConvoToolAdditions`",
        compat: { supportsMidConvoSystemMessages: true, supportsMidConvoToolAdditions: true },
      },
      { name: "Anthropic `claude-sonnet-4-6` (catalogue: folded)", model: "anthropic/claude-sonnet-4-6" },
      {
        name: "Anthropic `claude-opus-5-5` (catalogue: system messages, tool changes, effort in place)",
        model: "anthropic/claude-opus-5-5",
      },
      {
        name: "Responses `gpt-6.2-sol` (catalogue: system messages, additional tools, effort in place)",
        model: "openai/gpt-6.2-sol",
      },
    ];
    for (const config of configs) {
      const name = config.name;
      for (const impl of ["ours", "upstream"] as Implementation[]) {
        const f = figures(await runSide(impl, server, dirs, extension, config));
        const who = impl === "ours" ? "ours" : "pi 1.6.0";
        rows.push([name, who, f.requests, pct(f.messages, f.requests), pct(f.whole, f.requests)]);
        breaks.push(`- ${who}, ${name}: ${f.breaks.join("; ")}`);
      }
    }
  } finally {
    await killAllWorkers();
    await server.close();
    for (const d of dirs) d.cleanup();
  }
  out.push(
    "One scripted session (`bench/prefix.ts`) on the mock model server, run by",
    "our worker and by upstream pi 1.6.0 on the same replies: two tool calls, bash, edit and write",
    "removed by an extension, a retried 503, bash added back, a new tool, a manual compaction, a fork, a branch",
    "switch with a summary to before the compaction. Counted over consecutive conversation requests",
    "(summary requests aside): the request's messages start with every message of the one before,",
    "each the same bytes (as the server parsed them); and that with the same tool declarations too",
    "(what a provider's prompt cache needs). The mock model (Chat Completions) with and without the",
    "mid-conversation compat, and built-in catalogue models re-aimed at the mock; for Anthropic the",
    "system prompt counts as the first message and the moving cache breakpoints are left out.",
    "",
    table(
      ["model compat", "implementation", "request pairs", "messages prefix kept", "whole prefix kept (tools too)"],
      rows,
    ),
    "",
    "Where the prefix broke (the step before the request):",
    "",
    ...breaks,
    "",
    "A compaction, a fork and a branch switch change the history the request starts from, so they break",
    "it by design on both. A tool change breaks it only where later system messages are folded into the",
    "first one (the default for a server pi does not know to take them); with the compat, only the",
    "request's `tools` change on a removal or a redeclaration, and a new tool keeps all of it; where",
    "tool changes go in place too (Anthropic's `tool_addition` / `tool_removal`, Responses'",
    "`additional_tools`), the tools never change.",
    `Target, ours at least pi 1.6.0's share in every row: ${verdict(rows)}.`,
  );
  return out.join("\n");
}
