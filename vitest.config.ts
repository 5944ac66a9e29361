import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "test/**/*.test.tsx"],
    exclude: ["**/node_modules/**", "test/upstream/**"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    teardownTimeout: 10_000,
    // Workers a test's supervisor spawns run at the supervisor's weight: at the default
    // nice 10 they starve behind the other test files' forks on a 2-core machine and miss
    // their start-up deadline. test/supervisor/priority.test.ts checks the default itself.
    env: { PI_ORCH_WORKER_NICE: "0" },
    // The json report feeds the "N passed, N failed" line that CI prints.
    reporters: ["default", ["json", { outputFile: "test-results/vitest.json" }]],
  },
});
