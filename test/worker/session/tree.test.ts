import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { renderSessionHtml } from "../../../worker/session/export-html.js";
import { SessionStore } from "../../../worker/session/session-file.js";
import { branchBeingLeft, buildTree, fileLists, navigationLeaf } from "../../../worker/session/tree.js";
import { toLlmMessages } from "../../../worker/agent/to-llm.js";
import { assistant, toolResult, useTempDir, user } from "./helpers.js";

const UPSTREAM_SESSION_MANAGER = resolve(
  import.meta.dirname,
  "../../upstream/node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js",
);

interface PiSessionManager {
  appendMessage(message: unknown): string;
  appendModelChange(provider: string, modelId: string): string;
  appendThinkingLevelChange(level: string): string;
  appendCustomEntry(customType: string, data: unknown): string;
  appendCustomMessageEntry(customType: string, content: unknown, display: boolean, details?: unknown): string;
  appendLabelChange(targetId: string, label: string | undefined): string;
  appendSessionInfo(name: string): string;
  branch(id: string): void;
  branchWithSummary(id: string | null, summary: string, details?: unknown, fromHook?: boolean): string;
  getSessionFile(): string;
  getLeafId(): string | null;
  buildSessionContext(): { messages: { role: string }[]; thinkingLevel: string; model: unknown };
}
interface PiSessionModule {
  SessionManager: {
    create(cwd: string, dir: string): PiSessionManager;
    open(path: string, dir?: string): PiSessionManager;
  };
  buildSessionContext(entries: unknown[], leafId?: string | null): { messages: { role: string }[] };
}

async function upstream(): Promise<PiSessionModule> {
  return (await import(pathToFileURL(UPSTREAM_SESSION_MANAGER).href)) as PiSessionModule;
}

// Skipped, with the reason in its name, until test/upstream is installed (the e2e setup does).
describe.skipIf(!existsSync(UPSTREAM_SESSION_MANAGER))(
  "a pi 0.73 session file with branches (needs test/upstream)",
  () => {
    const { tmp, track } = useTempDir();

    /** A branched session written by the real pi 0.73.1 SessionManager. */
    async function piSession(): Promise<{ path: string; ids: Record<string, string>; pi: PiSessionModule }> {
      const pi = await upstream();
      const sm = pi.SessionManager.create("/work/project", tmp());
      const ids: Record<string, string> = {};
      ids.model = sm.appendModelChange("faux", "faux-1");
      sm.appendThinkingLevelChange("off");
      ids.q1 = sm.appendMessage(user("first question"));
      ids.a1 = sm.appendMessage(assistant("", ["call_1"]));
      ids.r1 = sm.appendMessage(toolResult("call_1", "a.txt"));
      ids.a1b = sm.appendMessage(assistant("first answer"));
      ids.q2 = sm.appendMessage(user("abandoned question"));
      ids.a2 = sm.appendMessage(assistant("abandoned answer"));
      ids.summary = sm.branchWithSummary(
        ids.a1b,
        "They explored the abandoned idea.",
        { readFiles: ["a.txt"], modifiedFiles: [] },
        false,
      );
      ids.custom = sm.appendCustomEntry("my-ext", { counter: 1 });
      ids.customMessage = sm.appendCustomMessageEntry("my-ext", "extension says hi", true, { k: 1 });
      ids.label = sm.appendLabelChange(ids.q1, "start");
      sm.appendSessionInfo("branchy");
      ids.q3 = sm.appendMessage(user("second branch question"));
      ids.a3 = sm.appendMessage(assistant("second branch answer"));
      return { path: sm.getSessionFile(), ids, pi };
    }

    it("loads with pi's context on the current branch, and on the other one", async () => {
      const { path, ids, pi } = await piSession();
      const warnings: string[] = [];
      const store = track(SessionStore.open(path, { warn: (m) => warnings.push(m) }));
      expect(warnings).toEqual([]);
      const entries = readFileSync(path, "utf8")
        .trim()
        .split("\n")
        .slice(1)
        .map((l) => JSON.parse(l) as unknown);
      for (const leaf of [ids.a3!, ids.a2!, ids.customMessage!]) {
        store.setLeaf(leaf);
        const ours = store.buildContext().messages;
        const theirs = pi.buildSessionContext(entries, leaf).messages;
        expect(ours).toEqual(theirs);
      }
      store.setLeaf(ids.a3!);
      const context = store.buildContext();
      expect(context.messages.map((m) => m.role)).toEqual([
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "branchSummary",
        "custom",
        "user",
        "assistant",
      ]);
      const llm = toLlmMessages(context.messages);
      const summaryText = llm[4]!.content as { text: string }[];
      expect(summaryText[0]!.text).toBe(
        "The following is a summary of a branch that this conversation came back from:\n\n<summary>\nThey explored the abandoned idea.</summary>",
      );
      expect(llm[5]).toMatchObject({ role: "user", content: [{ type: "text", text: "extension says hi" }] });
      expect(JSON.stringify(llm)).not.toContain("counter");
      expect(store.labelOf(ids.q1!)).toBe("start");
      expect(store.sessionName).toBe("branchy");
    });

    it("continues and is written back without losing an entry; pi reads the result", async () => {
      const { path, ids, pi } = await piSession();
      const before = readFileSync(path, "utf8");
      const store = track(SessionStore.open(path));
      store.setLeaf(ids.a2!);
      const q = store.append({ type: "message", message: user("back on the old branch") });
      store.setLabel(q.id, "resumed");
      store.close();
      const after = readFileSync(path, "utf8");
      expect(after.startsWith(before)).toBe(true);
      expect(after.split("\n").filter(Boolean)).toHaveLength(before.split("\n").filter(Boolean).length + 2);

      const reopened = pi.SessionManager.open(path);
      expect(reopened.getLeafId()).not.toBe(ids.a3);
      expect(reopened.buildSessionContext().messages.map((m) => m.role)).toEqual([
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "user",
        "assistant",
        "user",
      ]);
    });

    it("is a tree: roots, children oldest first, labels; and navigation collects the branch being left", async () => {
      const { path, ids } = await piSession();
      const store = track(SessionStore.open(path));
      const roots = store.tree();
      expect(roots).toHaveLength(1);
      let node = roots[0]!;
      const walk: string[] = [];
      while (node.children.length === 1) {
        walk.push(node.entry.id);
        node = node.children[0]!;
      }
      expect(node.entry.id).toBe(ids.a1b);
      expect(node.children.map((c) => c.entry.id)).toEqual([ids.q2, ids.summary]);
      expect(walk).toContain(ids.q1);
      expect(buildTree(store.entries).length).toBe(1);
      const q1 = (function find(nodes: typeof roots): (typeof roots)[number] | undefined {
        for (const n of nodes) if (n.entry.id === ids.q1) return n;
        for (const n of nodes) {
          const hit = find(n.children);
          if (hit) return hit;
        }
        return undefined;
      })(roots);
      expect(q1?.label).toBe("start");

      const left = branchBeingLeft(store.entriesById, ids.a3!, ids.a2!);
      expect(left.commonAncestorId).toBe(ids.a1b);
      expect(left.entries.map((e) => e.id)).toEqual([
        ids.summary,
        ids.custom,
        ids.customMessage,
        ids.label,
        expect.any(String),
        ids.q3,
        ids.a3,
      ]);
      expect(branchBeingLeft(store.entriesById, null, ids.a2!)).toEqual({ entries: [], commonAncestorId: null });

      expect(navigationLeaf(store.getEntry(ids.q2!)!)).toEqual({ leafId: ids.a1b, editorText: "abandoned question" });
      expect(navigationLeaf(store.getEntry(ids.customMessage!)!)).toEqual({
        leafId: ids.custom,
        editorText: "extension says hi",
      });
      expect(navigationLeaf(store.getEntry(ids.a2!)!)).toEqual({ leafId: ids.a2 });
    });
  },
);

describe("fileLists", () => {
  it("collects read and changed paths; a file read and changed counts as changed", () => {
    const call = (name: string, path: string) => ({
      type: "toolCall" as const,
      id: name + path,
      name,
      arguments: { path },
    });
    const a = {
      ...assistant("x"),
      content: [
        call("read", "b.ts"),
        call("read", "a.ts"),
        call("edit", "a.ts"),
        call("write", "c.ts"),
        call("bash", "x"),
      ],
    };
    expect(fileLists([a], [{ readFiles: ["old.ts"], modifiedFiles: [] }])).toEqual({
      readFiles: ["b.ts", "old.ts"],
      modifiedFiles: ["a.ts", "c.ts"],
    });
  });
});

describe("export_html rendering", () => {
  const { tmp, track } = useTempDir();

  it("escapes every text it shows, and inlines only well-formed raster images", () => {
    const store = track(SessionStore.create({ dir: tmp(), cwd: "/w<b>" }));
    store.append({ type: "message", message: user('<script>alert("x")</script> & more') });
    store.append({
      type: "message",
      message: {
        ...assistant("answer </pre><img src=x onerror=alert(1)>"),
        content: [
          { type: "thinking", thinking: "think <i>" },
          { type: "text", text: "answer </pre><img src=x onerror=alert(1)>" },
          { type: "toolCall", id: "c1", name: "bash<x>", arguments: { command: "echo '<script>'" } },
        ],
      },
    });
    store.append({
      type: "message",
      message: {
        role: "toolResult",
        toolCallId: "c1",
        toolName: "bash<x>",
        content: [
          { type: "text", text: "<script>out</script>" },
          { type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" },
          { type: "image", mimeType: "image/svg+xml", data: "PHN2Zz4=" },
          { type: "image", mimeType: "image/png", data: '"><script>' },
        ],
        isError: false,
        timestamp: 4,
      },
    });
    const html = renderSessionHtml({
      header: store.header,
      path: store.pathToLeaf(),
      entryCount: store.entries.length,
      name: "<b>name</b>",
      systemPrompt: "sys <x>",
    });
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toContain("<img src=x");
    expect(html).not.toContain("<b>");
    expect(html).not.toContain("<i>");
    expect(html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; more");
    expect(html).toContain('<img alt="image" src="data:image/png;base64,iVBORw0KGgo=">');
    expect(html).toContain("[image of type image/svg+xml not shown]");
    expect(html.match(/<img /g)).toHaveLength(1);
    expect(html).toContain("Tool call: bash&lt;x&gt;");
    expect(html).toContain("think &lt;i&gt;");
    expect(html).toContain("default-src 'none'");
    const out = join(tmp(), "page.html");
    writeFileSync(out, html);
    expect(readFileSync(out, "utf8")).toBe(html);
  });
});
