import { defineConfig } from "vitest/config";

/**
 * Test files outside the e2e folders that start processes, read dist/ or run upstream pi:
 * they belong to the e2e project. A unit test that starts a process fails with a message
 * naming this list (test/support/unit-setup.ts).
 */
const E2E_ELSEWHERE = [
  "test/readme.test.ts",
  "test/cli/help-examples.test.ts",
  "test/cli/home-hint.test.ts",
  "test/cli/tui/app.test.tsx",
  "test/cli/tui/supervisor-link.test.ts",
  "test/supervisor/agent-actor.test.ts",
  "test/supervisor/priority.test.ts",
  "test/supervisor/root-actor.test.ts",
  "test/supervisor/teardown.test.ts",
  "test/worker/extension-modules-exports.test.ts",
  "test/worker/faux-read.test.ts",
  "test/worker/models.test.ts",
  "test/worker/modes/idle-compact.test.ts",
  "test/worker/provider-streams-upstream.test.ts",
  "test/worker/providers/auth-file.test.ts",
  "test/worker/spill-dir.test.ts",
  "test/worker/tools/bash.test.ts",
  "test/worker/tools/grep-find.test.ts",
];
const E2E_FOLDERS = ["test/integration/**", "test/faults/**", "test/differential/**", "test/ipc/**"];
const TESTS = ["**/*.test.ts", "**/*.test.tsx"];

// This machine's NODE_EXTRA_CA_CERTS (a CA bundle for its registry proxy) makes every node
// start parse 220 KB of certificates, ~40 ms of CPU, and the suite starts thousands of node
// processes (workers, supervisors, CLIs, upstream pi), none of which speaks TLS: the tests
// talk to servers on 127.0.0.1. Users have no such cost. The test processes inherit this
// process's environment, so it goes here; the e2e setup gives it back to the one step that
// reaches the registry (installing upstream pi into test/upstream).
if (process.env.NODE_EXTRA_CA_CERTS !== undefined) {
  process.env.PI_ORCH_TEST_CA_CERTS = process.env.NODE_EXTRA_CA_CERTS;
  delete process.env.NODE_EXTRA_CA_CERTS;
}

export default defineConfig({
  test: {
    exclude: ["**/node_modules/**", "test/upstream/**"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Vitest's default on 2 cores is one worker, which runs every file in turn. Two keep both
    // cores busy while one file waits on a process or socket; the e2e tests wait on events,
    // not on the clock, so sharing the machine slows them but does not break them.
    maxWorkers: 2,
    teardownTimeout: 10_000,
    // Workers a test's supervisor spawns run at the supervisor's weight: at the default
    // nice 19 they starve behind the other test files' forks on a 2-core machine and miss
    // their start-up deadline. test/supervisor/priority.test.ts checks the default itself.
    //
    // The agent sandbox (bwrap) is on by default where it works; the suite runs unboxed unless
    // a test asks (test/faults/sandbox.test.ts, the README's commands): many tests signal a
    // worker's own pid or hand it fixture files they keep in the supervisor's home, which the
    // sandbox hides from the worker by design.
    env: { PI_ORCH_WORKER_NICE: "0", PI_ORCH_SANDBOX: "off" },
    // The json report feeds the "N passed, N failed" line that CI prints.
    reporters: ["default", ["json", { outputFile: "test-results/vitest.json" }]],
    projects: [
      {
        // Pure logic: no dist/, no child process, seconds in all (`npx vitest --project unit`).
        extends: true,
        test: {
          name: "unit",
          include: TESTS.map((t) => `test/${t}`),
          exclude: ["**/node_modules/**", "test/upstream/**", ...E2E_FOLDERS, ...E2E_ELSEWHERE],
          setupFiles: ["test/support/unit-setup.ts"],
          // No process, no shared state: one fork runs many files (isolating each file
          // in its own fork cost 30 s of start-up for 6 s of tests).
          isolate: false,
        },
      },
      {
        // Real processes, sockets, git, tmux, redis, sshd and upstream pi. Its global setup
        // builds dist/ and installs upstream pi into test/upstream (once).
        extends: true,
        test: {
          name: "e2e",
          include: [...E2E_FOLDERS.flatMap((f) => TESTS.map((t) => f.replace("**", t))), ...E2E_ELSEWHERE],
          globalSetup: ["test/support/e2e-setup.ts"],
          // Each file's processes, sockets and folders are its own and removed by its hooks, and
          // no e2e file changes process-wide state it does not restore, so one fork runs many
          // files: a fork per file cost each of ~145 files a node start, vitest's bootstrap and
          // the imports of test/support again (vitest's summed import time 54 -> 25 s).
          isolate: false,
        },
      },
    ],
  },
});
