/**
 * The setup the upstream-oracle test files share: before each test a mock model server, and
 * a second one for a test that runs upstream at the same time as ours (each side's replies
 * and requests its own); after each, also when the test failed or a step of the cleanup
 * throws, every worker killed, the servers closed and the test's temp folders removed. Call
 * `useOracleFixture()` once at the top of a test file (it registers the hooks).
 */
import { afterEach, beforeEach } from "vitest";
import { startMockModelServer, type MockModelServer } from "./mock-model-server.js";
import { killAllWorkers, tempDir } from "./rpc-worker.js";
import type { Implementation, TempDir } from "./upstream-oracle.js";

/** What a test of an oracle file works with. */
export interface OracleFixture {
  /**
   * The running test's mock model server. One object for the whole file that forwards to
   * the server of the test running now, so a file names it once at its top.
   */
  readonly server: MockModelServer;
  /**
   * A server per side for a test that runs both at once: `ours` is `server`, `upstream` a
   * second one (forwarding as `server` does).
   */
  readonly servers: Readonly<Record<Implementation, MockModelServer>>;
  /** Folders removed after the test; pass it to `startOracle`, or add a test's own. */
  readonly dirs: TempDir[];
  /** A new temp folder, removed after the test. */
  dir(prefix: string): string;
}

/** Register the hooks of an oracle test file and give its tests their server and folders. */
export function useOracleFixture(): OracleFixture {
  const current: Partial<Record<Implementation, MockModelServer>> = {};
  const dirs: TempDir[] = [];
  beforeEach(async () => {
    [current.ours, current.upstream] = await Promise.all([startMockModelServer(), startMockModelServer()]);
  });
  afterEach(async () => {
    try {
      await killAllWorkers();
    } finally {
      try {
        await Promise.all([current.ours?.close(), current.upstream?.close()]);
      } finally {
        current.ours = current.upstream = undefined;
        for (const d of dirs.splice(0)) d.cleanup();
      }
    }
  });
  const forward = (impl: Implementation): MockModelServer =>
    new Proxy({} as MockModelServer, {
      get: (_, name) => {
        const target = current[impl];
        if (!target) throw new Error("the oracle fixture's mock model servers exist only while a test runs");
        const value: unknown = Reflect.get(target, name, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  const servers = { ours: forward("ours"), upstream: forward("upstream") };
  return {
    server: servers.ours,
    servers,
    dirs,
    dir(prefix) {
      const d = tempDir(prefix);
      dirs.push(d);
      return d.path;
    },
  };
}
