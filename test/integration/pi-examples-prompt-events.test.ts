/**
 * pi's examples that read what the session built the system prompt from
 * (`before_agent_start`'s `systemPromptOptions`, `ctx.getSystemPrompt()`), loaded
 * unchanged and driven over RPC with the mock model server, on our worker and on
 * upstream pi 1.6.0 with the same script; the system prompt each one sent is read
 * from the recorded request. Skipped when test/upstream is not installed.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { RpcWorker } from "../support/rpc-worker.js";
import { startOracle, UPSTREAM, type Implementation } from "../support/upstream-oracle.js";
import { useOracleFixture } from "../support/oracle-fixture.js";

type Line = Record<string, any>;

/** The oracle: pi 1.6.0, whose examples both sides load. */
const PI = "1.6.0";
const installed = UPSTREAM[PI].installed;
const { server, dirs, dir } = useOracleFixture();

/** A fresh home (models.json on the mock server) and project; `prepare` may add files to the home first. */
function start(
  impl: Implementation,
  examples: string[],
  args: string[] = [],
  prepare: (home: string) => void = () => undefined,
): { w: RpcWorker; home: string; project: string } {
  return startOracle(impl, server, dirs, { pi: PI, examples, args, prepare });
}

async function run(w: RpcWorker, message: string): Promise<number> {
  const from = w.received.length;
  expect(await w.request({ type: "prompt", message }, 30_000)).toMatchObject({ success: true });
  await w.event("agent_end", 30_000, from);
  return from;
}

/** The system prompt of the n-th recorded model request. */
const systemPromptOf = (n: number): string => {
  const first = (server.requests[n].body as Line).messages[0];
  expect(first.role).toBe("system");
  return first.content as string;
};

function addSkill(home: string): void {
  mkdirSync(join(home, "skills", "deploy"), { recursive: true });
  writeFileSync(
    join(home, "skills", "deploy", "SKILL.md"),
    "---\nname: deploy\ndescription: How to deploy this project\n---\nRun make deploy.\n",
  );
}

describe.skipIf(!installed)(
  "before_agent_start's systemPromptOptions and ctx.getSystemPrompt: our worker and upstream pi",
  () => {
    it("prompt-customizer: its <tool_guidance> section names the active tools and the skills, after the appended text, as on pi 1.6.0", async () => {
      const blocks: string[] = [];
      for (const impl of ["ours", "upstream"] as const) {
        const { w } = start(
          impl,
          ["prompt-customizer"],
          ["--tools", "read,bash", "--append-system-prompt", "USER APPENDED TEXT"],
          addSkill,
        );
        server.enqueue({ text: "ok" });
        await run(w, "hello");
        const prompt = systemPromptOf(server.requests.length - 1);
        expect(prompt).toContain("USER APPENDED TEXT");
        expect(prompt.indexOf("USER APPENDED TEXT")).toBeLessThan(prompt.indexOf("<tool_guidance>"));
        blocks.push(prompt.slice(prompt.indexOf("<tool_guidance>")));
      }
      expect(blocks[0]).toBe(blocks[1]);
      // selectedTools: read and bash only; skills: the home's one.
      expect(blocks[1]).toBe(
        [
          "<tool_guidance>",
          "- Use `read` for file contents; it supports text and images.",
          "- For large files, use `offset` and `limit` to read in chunks.",
          "- Use `bash` for file operations such as `ls`, `find`, and `grep`.",
          "- Available skills: deploy.",
          "</tool_guidance>",
        ].join("\n"),
      );
    });

    it.each<Implementation>(["ours", "upstream"])(
      "system-prompt-header on %s: ctx.getSystemPrompt() at agent_start is the prompt the model got",
      async (impl) => {
        const { w } = start(impl, ["system-prompt-header"]);
        server.enqueue({ text: "ok" });
        const from = await run(w, "hello");
        const status = w.received
          .slice(from)
          .find(
            (l) => l.type === "extension_ui_request" && l.method === "setStatus" && l.statusKey === "system-prompt",
          );
        expect(status?.statusText).toBe(`System: ${systemPromptOf(0).length} chars`);
      },
    );
  },
);

describe.skipIf(!installed)("resources_discover paths: our worker and upstream pi", () => {
  it.each<Implementation>(["ours", "upstream"])(
    "dynamic-resources on %s: its skill is in the system prompt, its template expands and is listed",
    async (impl) => {
      const { w } = start(impl, ["dynamic-resources/index.ts"]);
      const commands = await w.request({ type: "get_commands" }, 30_000);
      const names = commands.data.commands.map((c: Line) => c.name as string);
      expect(names).toContain("dynamic");
      expect(names).toContain("skill:dynamic-resources");
      server.enqueue({ text: "ok" });
      await run(w, "/dynamic");
      expect(systemPromptOf(0)).toContain("Example skill loaded from resources_discover");
      const user = (server.requests[0].body as Line).messages.at(-1);
      const text = typeof user.content === "string" ? user.content : user.content.map((c: Line) => c.text).join("");
      expect(text).toContain("Summarize the current repository structure and mention any build or test commands.");
    },
  );
});

describe.skipIf(!installed)("message_end replacing the user's prompt: our worker and upstream pi", () => {
  it.each<Implementation>(["ours", "upstream"])(
    "on %s: the session file and the model's context get the replacement, once",
    async (impl) => {
      const ext = join(dir("pi-prompt-ext-"), "redact.ts");
      writeFileSync(
        ext,
        [
          "export default function (pi: any) {",
          '  pi.on("message_end", (event: any) => {',
          '    if (event.message.role !== "user") return;',
          '    return { message: { ...event.message, content: [{ type: "text", text: "[redacted prompt]" }] } };',
          "  });",
          "}",
        ].join("\n"),
      );
      const sessionFile = join(dir("pi-prompt-sessions-"), "s.jsonl");
      const { w } = start(impl, [], ["-e", ext, "--session", sessionFile]);
      server.enqueue({ toolCalls: [{ id: "call_1", name: "bash", arguments: { command: "true" } }] }, { text: "ok" });
      await run(w, "my password is hunter2");
      // The user message of each request. Upstream's first request races its session's
      // message_end handling and still carries the original; ours waits for the handlers.
      const sent = server.requests.map((r) =>
        JSON.stringify((r.body as Line).messages.find((m: Line) => m.role === "user").content),
      );
      expect(sent[1]).toContain("[redacted prompt]");
      if (impl === "ours") expect(sent[0]).toContain("[redacted prompt]");
      const entries = readFileSync(sessionFile, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Line);
      const users = entries.filter((e) => e.type === "message" && e.message.role === "user");
      expect(users.map((e) => e.message.content)).toEqual([[{ type: "text", text: "[redacted prompt]" }]]);
      expect(readFileSync(sessionFile, "utf8")).not.toContain("hunter2");
    },
  );
});
