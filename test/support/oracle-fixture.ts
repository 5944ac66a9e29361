/**
 * The setup the upstream-oracle test files share: before each test a mock model server;
 * after each, also when the test failed or a step of the cleanup throws, every worker
 * killed, the server closed and the test's temp folders removed. Call `useOracleFixture()`
 * once at the top of a test file (it registers the hooks).
 */
import { afterEach, beforeEach } from "vitest";
import { startMockModelServer, type MockModelServer } from "./mock-model-server.js";
import { killAllWorkers, tempDir } from "./rpc-worker.js";
import type { TempDir } from "./upstream-oracle.js";

/** What a test of an oracle file works with. */
export interface OracleFixture {
  /**
   * The running test's mock model server. One object for the whole file that forwards to
   * the server of the test running now, so a file names it once at its top.
   */
  readonly server: MockModelServer;
  /** Folders removed after the test; pass it to `startOracle`, or add a test's own. */
  readonly dirs: TempDir[];
  /** A new temp folder, removed after the test. */
  dir(prefix: string): string;
}

/** Register the hooks of an oracle test file and give its tests their server and folders. */
export function useOracleFixture(): OracleFixture {
  let current: MockModelServer | undefined;
  const dirs: TempDir[] = [];
  beforeEach(async () => {
    current = await startMockModelServer();
  });
  afterEach(async () => {
    try {
      await killAllWorkers();
    } finally {
      try {
        await current?.close();
      } finally {
        current = undefined;
        for (const d of dirs.splice(0)) d.cleanup();
      }
    }
  });
  const running = (): MockModelServer => {
    if (!current) throw new Error("the oracle fixture's mock model server exists only while a test runs");
    return current;
  };
  const server = new Proxy({} as MockModelServer, {
    get: (_, name) => {
      const target = running();
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return {
    server,
    dirs,
    dir(prefix) {
      const d = tempDir(prefix);
      dirs.push(d);
      return d.path;
    },
  };
}
