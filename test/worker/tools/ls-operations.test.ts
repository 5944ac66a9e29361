/**
 * `createLsTool(cwd, { operations })` from the extensions' `@mariozechner/pi-coding-agent`
 * module: the listing comes from the extension's operations (here backed by another real
 * folder, as ssh.ts maps a local path to a remote one), never from the agent's cwd.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { piCodingAgentModule } from "../../../worker/extensions/modules/coding-agent.js";

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), "pi-ls-ops-"));
  made.push(d);
  return d;
};

describe("createLsTool with pi's LsOperations", () => {
  it("lists through exists / stat / readdir of the operations, folders marked", async () => {
    const local = temp();
    const remote = temp();
    writeFileSync(join(local, "only-local.txt"), "");
    writeFileSync(join(remote, "b.txt"), "");
    mkdirSync(join(remote, "A-folder"));
    const calls: string[] = [];
    const toRemote = (p: string) => p.replace(local, remote);
    const operations = {
      exists: (p: string) => (calls.push(`exists ${p}`), existsSync(toRemote(p))),
      stat: async (p: string) => (calls.push(`stat ${p}`), statSync(toRemote(p))),
      readdir: async (p: string) => (calls.push(`readdir ${p}`), readdirSync(toRemote(p))),
    };
    const ls = (
      piCodingAgentModule("/unused-agent-dir").createLsTool as (
        cwd: string,
        o: unknown,
      ) => { execute: (...a: unknown[]) => Promise<{ content: { text: string }[] }> }
    )(local, { operations });
    const result = await ls.execute("call_1", {});
    expect(result.content[0].text).toBe("A-folder/\nb.txt");
    expect(calls[0]).toBe(`exists ${local}`);
    expect(calls).toContain(`readdir ${local}`);
    await expect(ls.execute("call_2", { path: "b.txt" })).rejects.toThrow("Not a directory");
    await expect(ls.execute("call_3", { path: "missing" })).rejects.toThrow("Path not found");
  });
});
