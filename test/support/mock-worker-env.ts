/**
 * Per-test world for suites that run the built `pi --mode rpc` against the mock model
 * server: a mock server, a temp home and a temp project, and a `models.json` writer that
 * points a `mock` provider at the server. Hooks are registered by `useMockWorkerEnv()`;
 * afterEach kills every worker, closes the server and removes both folders, each step
 * even when an earlier one (or the test) failed.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { startMockModelServer, type MockModelServer } from "./mock-model-server.js";
import { killAllWorkers, tempDir } from "./rpc-worker.js";

export interface MockWorkerEnv {
  readonly server: MockModelServer;
  /** PI_ORCH_HOME of the workers. */
  readonly home: string;
  /** The workers' cwd. */
  readonly project: string;
  /** Write `<home>/models.json` with a `mock` provider on the mock server. */
  writeModels(opts?: {
    api?: "openai-completions" | "anthropic-messages";
    contextWindow?: number;
    apiKey?: string;
  }): void;
}

/** Register beforeEach/afterEach hooks and return the current test's world. */
export function useMockWorkerEnv(): MockWorkerEnv {
  let server: MockModelServer | undefined;
  let home: ReturnType<typeof tempDir> | undefined;
  let project: ReturnType<typeof tempDir> | undefined;
  const need = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`mock worker env: no ${what} (used outside a test?)`);
    return value;
  };

  beforeEach(async () => {
    home = tempDir("pi-home-");
    project = tempDir("pi-project-");
    server = await startMockModelServer();
  });

  afterEach(async () => {
    try {
      await killAllWorkers();
    } finally {
      try {
        await server?.close();
      } finally {
        home?.cleanup();
        project?.cleanup();
        server = home = project = undefined;
      }
    }
  });

  return {
    get server() {
      return need(server, "mock model server");
    },
    get home() {
      return need(home, "home").path;
    },
    get project() {
      return need(project, "project").path;
    },
    writeModels({ api = "openai-completions", contextWindow = 128_000, apiKey = "test-key-not-secret" } = {}) {
      const url = need(server, "mock model server").url;
      const dir = need(home, "home").path;
      mkdirSync(dir, { recursive: true });
      writeFileSync(
        join(dir, "models.json"),
        JSON.stringify({
          providers: {
            mock: {
              baseUrl: api === "openai-completions" ? `${url}/v1` : url,
              api,
              apiKey,
              models: [{ id: "mock-1", name: "Mock 1", contextWindow, maxTokens: 4096 }],
            },
          },
        }),
      );
    },
  };
}
