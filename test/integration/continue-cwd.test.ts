/**
 * `pi -c` continues a session of this working directory only. `/x/y` and `/x-y` encode to
 * the same session folder (`--x-y--`); the session header's `cwd` tells them apart.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { killAllWorkers, RpcWorker, tempDir } from "../support/rpc-worker.js";
import { encodeCwd } from "../../worker/session/locate.js";

const dirs: { cleanup: () => void }[] = [];
afterEach(async () => {
  await killAllWorkers();
  for (const d of dirs.splice(0)) d.cleanup();
});

it("pi -c in /x/y does not continue the newer session of /x-y", async () => {
  const dir = tempDir("pi-continue-cwd-");
  dirs.push(dir);
  const env = { PI_ORCH_HOME: undefined, PI_CODING_AGENT_DIR: join(dir.path, "agent"), HOME: dir.path };
  const nested = join(dir.path, "x", "y");
  const dashed = join(dir.path, "x-y");
  for (const d of [nested, dashed]) mkdirSync(d, { recursive: true });
  expect(encodeCwd(nested)).toBe(encodeCwd(dashed));

  const named = async (cwd: string, name: string, args: string[] = []) => {
    const w = new RpcWorker(["--mode", "rpc", "--provider", "faux", ...args], { cwd, env });
    if (name) {
      await w.request({ type: "set_session_name", name });
      // A session is a file once something was said in it (pi writes it with the first message).
      const from = w.received.length;
      await w.request({ type: "prompt", message: "hello" });
      await w.event("agent_end", undefined, from);
    }
    const state = (await w.request({ type: "get_state" })).data;
    w.closeStdin();
    await w.exited;
    return state as { sessionFile: string; sessionName?: string };
  };
  const mine = await named(nested, "nested work");
  const theirs = await named(dashed, "dashed work");
  expect(theirs.sessionFile).not.toBe(mine.sessionFile);

  const continued = await named(nested, "", ["-c"]);
  expect(continued.sessionFile).toBe(mine.sessionFile);
  expect(continued.sessionName).toBe("nested work");
  expect((await named(dashed, "", ["-c"])).sessionFile).toBe(theirs.sessionFile);
});
