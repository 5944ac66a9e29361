import { describe, expect, it } from "vitest";
import { REDACTED, redactArgv, redactEnv } from "../../supervisor/redact.js";

describe("redactArgv", () => {
  it.each([
    [
      ["pi", "--api-key", "sk-1", "--model", "m"],
      ["pi", "--api-key", REDACTED, "--model", "m"],
    ],
    [
      ["pi", "--api-key=sk-1"],
      ["pi", `--api-key=${REDACTED}`],
    ],
    [
      ["pi", "--github-token", "t"],
      ["pi", "--github-token", REDACTED],
    ],
    [
      ["pi", "--session", "/a/b.jsonl"],
      ["pi", "--session", "/a/b.jsonl"],
    ],
    [
      ["pi", "--api-key"],
      ["pi", "--api-key"],
    ],
  ])("%j → %j", (argv, expected) => {
    expect(redactArgv(argv)).toEqual(expected);
  });
});

describe("redactEnv", () => {
  it("hides credential-like names and keeps the rest", () => {
    expect(redactEnv({ OPENAI_API_KEY: "sk", GH_TOKEN: "t", DB_PASSWORD: "p", PI_ORCH_HOME: "/h" })).toEqual({
      OPENAI_API_KEY: REDACTED,
      GH_TOKEN: REDACTED,
      DB_PASSWORD: REDACTED,
      PI_ORCH_HOME: "/h",
    });
    expect(redactEnv(undefined)).toBeUndefined();
  });
});
