import { existsSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { AgentMessage } from "../../../shared/schema/messages.js";
import {
  buildSummaryRequest,
  buildTurnPrefixRequest,
  serializeForSummary,
} from "../../../worker/session/summary-request.js";
import { assistant, toolResult, user } from "./helpers.js";

/** A conversation with every kind of message a summary request carries. */
const CONVERSATION: AgentMessage[] = [
  user("fix the login"),
  { role: "user", content: "a plain string", timestamp: 0 },
  {
    ...assistant("looking"),
    content: [
      { type: "thinking", thinking: "hidden reasoning" },
      { type: "text", text: "first" },
      { type: "text", text: "second" },
      { type: "toolCall", id: "c1", name: "read", arguments: { path: "a.ts", offset: 3 } },
      { type: "toolCall", id: "c2", name: "bash", arguments: { command: "ls" } },
    ],
  },
  toolResult("c1", "z".repeat(2500)),
  { ...toolResult("c2", ""), content: [] },
  { ...assistant(""), stopReason: "error", errorMessage: "503" },
  {
    role: "bashExecution",
    command: "make",
    output: "",
    exitCode: 2,
    cancelled: false,
    truncated: true,
    fullOutputPath: "/tmp/out",
    timestamp: 0,
  },
  {
    role: "bashExecution",
    command: "secret",
    output: "x",
    exitCode: 0,
    cancelled: false,
    truncated: false,
    timestamp: 0,
    excludeFromContext: true,
  },
  {
    role: "custom",
    customType: "note",
    content: [{ type: "text", text: "from an extension" }],
    display: true,
    timestamp: 0,
  },
  { role: "branchSummary", summary: "left a branch", fromId: "x", timestamp: 0 },
  { role: "compactionSummary", summary: "earlier", tokensBefore: 1, timestamp: 0 },
];

describe("summary requests", () => {
  it("ask to update a previous summary, with the user's focus", () => {
    const text = buildSummaryRequest(
      [{ role: "compactionSummary", summary: "## Goal\nold goal", tokensBefore: 5, timestamp: 0 }, user("more")],
      "the database",
    );
    expect(text).toMatch(
      /^<conversation>\n\[User\]: more\n<\/conversation>\n\n<previous-summary>\n## Goal\nold goal\n<\/previous-summary>\n\nThe messages above are NEW conversation messages/,
    );
    expect(text.endsWith("\n\nAdditional focus: the database")).toBe(true);
  });

  it("ask for a first summary without a previous one", () => {
    const text = buildSummaryRequest([user("fix the login")]);
    expect(text).toMatch(
      /^<conversation>\n\[User\]: fix the login\n<\/conversation>\n\nThe messages above are a conversation to summarize\./,
    );
    expect(text).not.toContain("<previous-summary>");
  });

  it("ask for a split turn's start with the user's focus too", () => {
    const text = buildTurnPrefixRequest([user("run the checks")], "the tests");
    expect(text).toMatch(
      /^# Conversation\n\[User\]: run the checks\n\n# Instructions\nThe messages above are earlier context/,
    );
    expect(text.endsWith("\n\nAdditional focus: the tests")).toBe(true);
  });
});

// pi 1.6.0's own serializeConversation over its convertToLlm (installed by the e2e setup; skipped until then) as the oracle.
const PI16 = join(import.meta.dirname, "../../upstream/node_modules/@earendil-works/pi-coding-agent/dist/core");

describe.skipIf(!existsSync(join(PI16, "messages.js")))("the conversation text, against pi 1.6.0's", () => {
  let pi: { serialize: (messages: AgentMessage[]) => string };
  beforeAll(async () => {
    const { convertToLlm } = await import(join(PI16, "messages.js"));
    const { serializeConversation } = await import(join(PI16, "compaction/utils.js"));
    pi = { serialize: (messages) => serializeConversation(convertToLlm(messages)) };
  });

  it("is pi's, message kind by message kind", () => {
    for (const message of CONVERSATION)
      expect(serializeForSummary([message]), message.role).toBe(pi.serialize([message]));
    expect(serializeForSummary(CONVERSATION)).toBe(pi.serialize(CONVERSATION));
    // Thinking is left out, long tool output cut, as pi does.
    expect(serializeForSummary(CONVERSATION)).not.toContain("hidden reasoning");
    expect(serializeForSummary(CONVERSATION)).toContain("[... 500 more characters truncated]");
  });
});
