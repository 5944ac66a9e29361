import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "test/**/*.test.tsx"],
    exclude: ["**/node_modules/**", "test/upstream/**"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    teardownTimeout: 10_000,
    // The json report feeds the "N passed, N failed" line that CI prints.
    reporters: ["default", ["json", { outputFile: "test-results/vitest.json" }]],
  },
});
