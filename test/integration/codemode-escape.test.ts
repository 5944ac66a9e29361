/**
 * The codemode sandbox holds: scripts that reach for `require`, `process`, `fetch`,
 * `import()`, compute forever (past their `timeout_ms`) or allocate without end each get
 * a clean error result, on ours as on pi 1.6.0 with the same scripts, and the worker
 * lives on: it answers the next prompt and runs the next script.
 */
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import type { RpcWorker } from "../support/rpc-worker.js";
import { type Implementation, startOracle, UPSTREAM } from "../support/upstream-oracle.js";

const IMPLS: Implementation[] = ["ours", "upstream"];
const fx = useOracleFixture();

const ESCAPES: Record<string, string> = {
  require: 'const fs = require("fs");\nreturn fs.readFileSync("/etc/passwd", "utf8");',
  process: "process.exit(1);",
  fetch: 'return await fetch("http://127.0.0.1:1/");',
  import: 'const fs = await import("node:fs");\nreturn Object.keys(fs);',
  loop: '// @options: {"timeout_ms": 1000}\nwhile (true) {}',
  memory: "const hoard = [];\nwhile (true) hoard.push(new Array(1 << 20).fill(hoard.length));",
};

/**
 * Both sides give the script's thread what is left of its timeout after the wait for a free
 * codemode worker and name that in the message, so under load the figure can be a few ms short
 * of `timeout_ms`; any figure within 100 ms of 1000 reads as 1000, any other stays as it is.
 */
function scriptTime(error: string | null): string | null {
  return (
    error?.replace(/after (\d+) ms$/, (all, ms: string) =>
      Number(ms) > 900 && Number(ms) <= 1000 ? "after 1000 ms" : all,
    ) ?? null
  );
}

/** Each codemode result: whether it failed, its header, and the first line of its error. */
function outcomes(w: RpcWorker) {
  return w.received
    .filter((l) => l.type === "tool_execution_end" && l.toolName === "codemode")
    .map((l) => {
      const text = (l.result.content as { type: string; text?: string }[]).map((b) => b.text ?? "").join("");
      return {
        id: l.toolCallId as string,
        isError: l.isError as boolean,
        header: text.split("\n", 1)[0],
        error: scriptTime(/Script error:\n(.*)/.exec(text)?.[1] ?? null),
        output: text.includes("Script error:") ? null : text.split("Output:\n")[1],
      };
    });
}

describe.skipIf(!UPSTREAM["1.6.0"].installed)("codemode's sandbox, ours and pi 1.6.0", () => {
  it("require, process, fetch, import(), an endless loop and a huge allocation each fail cleanly; the worker lives", async () => {
    const seen: Record<string, unknown> = {};
    for (const impl of IMPLS) {
      fx.server.enqueue(
        ...Object.entries(ESCAPES).map(([id, code]) => ({
          toolCalls: [{ id, name: "codemode", arguments: { code } }],
        })),
        { toolCalls: [{ id: "after", name: "codemode", arguments: { code: "return 6 * 7;" } }] },
        { text: "survived" },
        { text: "still here" },
      );
      const { w } = startOracle(impl, fx.server, fx.dirs, {
        pi: "1.6.0",
        args: ["-e", "builtin:codemode", "--tools", "read,bash,edit,write,codemode"],
      });
      await w.request({ type: "prompt", message: "try to escape" });
      await w.event("agent_settled", 60_000);
      const from = w.received.length;
      await w.request({ type: "prompt", message: "are you there?" });
      const end = await w.waitFor((l) => l.type === "agent_settled", 30_000, from);
      expect(end.type).toBe("agent_settled");
      const replies = w.received
        .slice(from)
        .filter((l) => l.type === "message_end" && l.message.role === "assistant")
        .map((l) => l.message.content[0]?.text);
      seen[impl] = { outcomes: outcomes(w), replies };
    }
    expect(seen.ours).toEqual(seen.upstream);
    const failed = (id: string, error: string) => ({ id, isError: true, header: "Script failed", error, output: null });
    expect(seen.ours).toEqual({
      outcomes: [
        failed("require", "ReferenceError: require is not defined"),
        failed("process", "ReferenceError: process is not defined"),
        failed("fetch", "ReferenceError: fetch is not defined"),
        failed("import", "ReferenceError: could not load module 'node:fs'"),
        failed("loop", "Script timed out: Execution timed out after 1000 ms"),
        failed("memory", "InternalError: out of memory"),
        { id: "after", isError: false, header: "Script completed", error: null, output: "42" },
      ],
      replies: ["still here"],
    });
  });

  it("a script computing forever without a deadline keeps the worker answering, and abort ends it", async () => {
    const seen: Record<string, unknown> = {};
    for (const impl of IMPLS) {
      fx.server.enqueue({ toolCalls: [{ id: "spin", name: "codemode", arguments: { code: "while (true) {}" } }] });
      const { w } = startOracle(impl, fx.server, fx.dirs, {
        pi: "1.6.0",
        args: ["-e", "builtin:codemode", "--tools", "read,codemode"],
      });
      await w.request({ type: "prompt", message: "spin" });
      await w.waitFor((l) => l.type === "tool_execution_start" && l.toolName === "codemode", 30_000);
      // The loop runs in the sandbox's thread: the RPC loop still answers.
      const state = await w.request({ type: "get_state" });
      expect(state.data.isStreaming).toBe(true);
      await w.request({ type: "abort" });
      await w.event("agent_settled", 30_000);
      seen[impl] = outcomes(w);
    }
    expect(seen.ours).toEqual(seen.upstream);
    expect(seen.ours).toEqual([
      {
        id: "spin",
        isError: true,
        header: "Script failed",
        error: "Script aborted: This operation was aborted",
        output: null,
      },
    ]);
  });
});
