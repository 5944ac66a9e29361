/**
 * Skills, prompt templates, settings and the session tree through a real `pi --mode
 * rpc` against the mock model: what reaches the model is checked in the requests the
 * mock server received.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useMockWorkerEnv } from "../support/mock-worker-env.js";
import { RpcWorker } from "../support/rpc-worker.js";

const ctx = useMockWorkerEnv();

function startWorker(args: string[] = []): RpcWorker {
  return new RpcWorker(["--mode", "rpc", "--provider", "mock", "--model", "mock-1", ...args], {
    cwd: ctx.project,
    env: { PI_ORCH_HOME: ctx.home },
  });
}

/** Text of a chat-completions message (string or parts). */
function text(message: { content: unknown }): string {
  if (typeof message.content === "string") return message.content;
  return (message.content as { text?: string }[]).map((p) => p.text ?? "").join("");
}

function write(path: string, content: string): void {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, content);
}

describe("resources over RPC", () => {
  it("lists and expands prompt templates and skills; project ones only when trusted; settings apply", async () => {
    ctx.writeModels({});
    write(
      join(ctx.home, "skills", "brave", "SKILL.md"),
      "---\nname: brave\ndescription: Web search for docs.\n---\nRun ./search.js QUERY.\n",
    );
    write(
      join(ctx.home, "prompts", "review.md"),
      "---\ndescription: Review a file\n---\nReview $1 carefully, focus: ${@:2}",
    );
    write(join(ctx.home, "settings.json"), JSON.stringify({ steeringMode: "all", compaction: { enabled: false } }));
    mkdirSync(join(ctx.project, ".git"));
    write(join(ctx.project, ".pi", "prompts", "ship.md"), "Ship it: $ARGUMENTS");
    write(join(ctx.project, ".pi", "settings.json"), JSON.stringify({ followUpMode: "all" }));
    write(join(ctx.project, ".pi", "APPEND_SYSTEM.md"), "Project rule: be brief.");

    const untrusted = startWorker(["--no-session"]);
    const names = (await untrusted.request({ type: "get_commands" })).data.commands.map(
      (c: { name: string }) => c.name,
    );
    expect(names).toEqual(["review", "skill:brave"]);
    const state = (await untrusted.request({ type: "get_state" })).data;
    expect([state.steeringMode, state.followUpMode, state.autoCompactionEnabled]).toEqual([
      "all",
      "one-at-a-time",
      false,
    ]);
    untrusted.closeStdin();
    await untrusted.exited;
    expect(untrusted.stderr.join("")).toMatch(/skipped .*\.pi\/settings\.json: the project is not trusted/);

    const w = startWorker(["--trust", "--no-session"]);
    const commands = (await w.request({ type: "get_commands" })).data.commands;
    expect(commands.map((c: { name: string; source: string }) => [c.name, c.source])).toEqual([
      ["review", "prompt"],
      ["ship", "prompt"],
      ["skill:brave", "skill"],
    ]);
    expect(commands[1].sourceInfo).toMatchObject({
      scope: "project",
      source: "local",
      path: join(ctx.project, ".pi", "prompts", "ship.md"),
    });
    expect((await w.request({ type: "get_state" })).data.followUpMode).toBe("all");

    ctx.server.enqueue({ text: "reviewed" }, { text: "searched" });
    await w.request({ type: "prompt", message: '/review src/a.ts "error handling" tests' });
    await w.event("agent_end");
    const first = ctx.server.requests[0]!.body.messages as { role: string; content: unknown }[];
    expect(text(first.at(-1)!)).toBe("Review src/a.ts carefully, focus: error handling tests");
    const system = text(first[0]!);
    expect(system).toContain("<name>brave</name>");
    expect(system).toContain(`<location>${join(ctx.home, "skills", "brave", "SKILL.md")}</location>`);
    expect(system).toContain("Project rule: be brief.");

    const from = w.received.length;
    await w.request({ type: "prompt", message: "/skill:brave find the docs" });
    await w.waitFor((l) => l.type === "agent_end", 10_000, from);
    const second = ctx.server.requests[1]!.body.messages as { content: unknown }[];
    expect(text(second.at(-1)!)).toBe(
      `<skill name="brave" location="${join(ctx.home, "skills", "brave", "SKILL.md")}">\nReferences are relative to ${join(ctx.home, "skills", "brave")}.\n\nRun ./search.js QUERY.\n</skill>\n\nfind the docs`,
    );
  });

  it("a bad settings file stops the worker with the file and key named", async () => {
    ctx.writeModels({});
    write(join(ctx.home, "settings.json"), JSON.stringify({ compaction: { reserveTokens: "lots" } }));
    const w = startWorker(["--no-session"]);
    expect((await w.exited).code).toBe(1);
    expect(w.stderr.join("")).toContain(
      `settings file ${join(ctx.home, "settings.json")}: key "compaction.reserveTokens" must be integer (it is "lots")`,
    );
  });
});

describe("the session tree over RPC (get_tree, navigate_tree)", () => {
  it("navigates without and with a summary; the summary reaches the model on its branch", async () => {
    ctx.writeModels({});
    ctx.server.enqueue({ text: "answer one" }, { text: "answer two" });
    const w = startWorker();
    await w.request({ type: "prompt", message: "question one" });
    await w.event("agent_end");
    let from = w.received.length;
    await w.request({ type: "prompt", message: "question two" });
    await w.waitFor((l) => l.type === "agent_end", 10_000, from);

    const { tree, leafId } = (await w.request({ type: "get_tree" })).data;
    interface Node {
      entry: { id: string; type: string; message?: { role: string; content: unknown } };
      children: Node[];
    }
    const flat: Node[] = [];
    const walk = (nodes: Node[]) => {
      for (const n of nodes) {
        flat.push(n);
        walk(n.children);
      }
    };
    walk(tree);
    expect(flat.at(-1)!.entry.id).toBe(leafId);
    const users = flat.filter((n) => n.entry.type === "message" && n.entry.message!.role === "user");
    const answerOne = flat.find((n) => n.entry.message?.role === "assistant")!;

    // To a user message: the leaf goes before it and its text comes back to edit.
    const back = await w.request({ type: "navigate_tree", targetId: users[1]!.entry.id });
    expect(back.data).toEqual({ cancelled: false, editorText: "question two" });
    expect((await w.request({ type: "get_messages" })).data.messages.map((m: { role: string }) => m.role)).toEqual([
      "system",
      "user",
      "assistant",
    ]);

    // Back to the old leaf with a summary of the branch being left (empty here: nothing to summarize).
    ctx.server.enqueue({ text: "the summary text" });
    const there = await w.request({ type: "navigate_tree", targetId: leafId, summarize: true });
    expect(there.data.cancelled).toBe(false);
    expect(ctx.server.requests).toHaveLength(2);

    // From the second answer to the first one, summarizing question/answer two.
    const summarized = await w.request({
      type: "navigate_tree",
      targetId: answerOne.entry.id,
      summarize: true,
      label: "fork point",
    });
    // pi 1.6: fromId is the leaf that was left (the old leaf again after the summary-less navigation).
    expect(summarized.data.summaryEntry).toMatchObject({ type: "branch_summary", fromId: leafId });
    expect(summarized.data.summaryEntry.summary).toContain("the summary text");
    expect(text(ctx.server.requests[2]!.body.messages.at(-1))).toContain("question two");

    ctx.server.enqueue({ text: "answer three" });
    from = w.received.length;
    await w.request({ type: "prompt", message: "question three" });
    await w.waitFor((l) => l.type === "agent_end", 10_000, from);
    const sent = ctx.server.requests[3]!.body.messages as { content: unknown }[];
    const texts = sent.map(text);
    expect(
      texts.some(
        (t) =>
          t.includes("summary of a branch that this conversation came back from") && t.includes("the summary text"),
      ),
    ).toBe(true);
    expect(texts.some((t) => t === "question two")).toBe(false);

    const labelled = (await w.request({ type: "get_tree" })).data.tree;
    expect(JSON.stringify(labelled)).toContain('"label":"fork point"');
    expect((await w.request({ type: "navigate_tree", targetId: "nope" })).error).toBe("Entry nope not found");
  });
});

describe("ctx.navigateTree for extensions", () => {
  it("an extension command moves the leaf, as pi's navigateTree does", async () => {
    ctx.writeModels({});
    const extension = join(ctx.project, "nav.ts");
    writeFileSync(
      extension,
      `export default function (pi: any) {
  pi.registerCommand("back", {
    description: "navigate to an entry",
    handler: async (args: string, ctx: any) => {
      const result = await ctx.navigateTree(args.trim());
      ctx.ui.notify("navigated " + JSON.stringify(result), "info");
    },
  });
}
`,
    );
    ctx.server.enqueue({ text: "answer one" });
    const w = startWorker(["-e", extension]);
    await w.request({ type: "prompt", message: "question one" });
    await w.event("agent_end");
    const forks = (await w.request({ type: "get_fork_messages" })).data.messages;
    await w.request({ type: "prompt", message: `/back ${forks[0].entryId}` });
    const notice = await w.waitFor((l) => l.type === "extension_ui_request" && l.method === "notify");
    expect(notice.message).toBe('navigated {"cancelled":false}');
    // Before the first prompt: only the system message the first request recorded is left, as in pi 1.6.
    const left = (await w.request({ type: "get_messages" })).data.messages;
    expect(left.map((m: { role: string }) => m.role)).toEqual(["system"]);
  });
});
