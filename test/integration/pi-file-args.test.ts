/**
 * `pi -p @notes.md @pixel.png "question"` against upstream pi 0.73.1 as the oracle: both
 * binaries run in the same project against the same mock model server (a models.json
 * provider), and the user message each one sends must be the same request content:
 * the text file in a `<file>` block before the question, the image attached, the empty
 * file skipped. A missing file fails both with exit 1, naming it.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockModelServer, type MockModelServer } from "../support/mock-model-server.js";
import { PI_BIN, tempDir } from "../support/rpc-worker.js";

const UPSTREAM = resolve(import.meta.dirname, "../upstream/node_modules/@mariozechner/pi-coding-agent/dist/cli.js");
// A valid 1x1 PNG: small enough that upstream sends it unchanged (it resizes only past 2000 px or 4.5 MB).
const PIXEL = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);

type Impl = "ours" | "upstream";
let server: MockModelServer;
const root = tempDir("pi-file-args-");
const project = join(root.path, "project");

beforeAll(async () => {
  server = await startMockModelServer();
  mkdirSync(project);
  writeFileSync(join(project, "notes.md"), "# Notes\nthe sky is green\n");
  writeFileSync(join(project, "pixel.png"), PIXEL);
  writeFileSync(join(project, "empty.txt"), "");
  for (const impl of ["ours", "upstream"] as const) {
    mkdirSync(join(root.path, impl));
    const models = {
      providers: {
        mock: {
          baseUrl: `${server.url}/v1`,
          api: "openai-completions",
          apiKey: "mock-key",
          models: [{ id: "mock-1", input: ["text", "image"] }],
        },
      },
    };
    writeFileSync(join(root.path, impl, "models.json"), JSON.stringify(models));
  }
});

afterAll(async () => {
  await server?.close();
  root.cleanup();
});

function pi(impl: Impl, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const home = join(root.path, impl);
  const env = {
    PATH: process.env.PATH,
    HOME: root.path,
    NO_COLOR: "1",
    ...(impl === "ours" ? { PI_ORCH_HOME: home } : { PI_CODING_AGENT_DIR: home, PI_OFFLINE: "1" }),
  };
  const bin = impl === "ours" ? PI_BIN : UPSTREAM;
  return new Promise((done) => {
    const child = execFile(
      process.execPath,
      [bin, "-p", "--no-session", "--provider", "mock", "--model", "mock-1", ...args],
      { cwd: project, env, timeout: 60_000 },
      (err, stdout, stderr) => done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

/** The last user message of the request the run made. */
async function userMessageSent(impl: Impl, args: string[]): Promise<unknown> {
  const before = server.requests.length;
  server.enqueue({ text: "seen" });
  const r = await pi(impl, args);
  expect(r, `${impl}: ${r.stderr}`).toMatchObject({ code: 0 });
  expect(r.stdout.trim()).toBe("seen");
  expect(server.requests.length).toBe(before + 1);
  const messages = server.requests.at(-1)!.body.messages as { role: string; content: unknown }[];
  return messages.filter((m) => m.role === "user").at(-1)!.content;
}

describe.skipIf(!existsSync(UPSTREAM))("pi @file arguments, as upstream pi 0.73.1", () => {
  it("puts a text file before the message, attaches an image, skips an empty file: the same request as upstream", async () => {
    const args = ["@notes.md", "@pixel.png", "@empty.txt", "what is in them?"];
    const ours = await userMessageSent("ours", args);
    const theirs = await userMessageSent("upstream", args);
    expect(ours).toEqual(theirs);
    const notes = join(project, "notes.md");
    expect(ours).toEqual([
      {
        type: "text",
        text: `<file name="${notes}">\n# Notes\nthe sky is green\n\n</file>\n<file name="${join(project, "pixel.png")}"></file>\nwhat is in them?`,
      },
      { type: "image_url", image_url: { url: `data:image/png;base64,${PIXEL.toString("base64")}` } },
    ]);
  }, 120_000);

  it("takes files alone, with no message", async () => {
    expect(await userMessageSent("ours", ["@notes.md"])).toEqual(await userMessageSent("upstream", ["@notes.md"]));
  }, 120_000);

  it("fails on a missing file with exit 1, naming it, before any request", async () => {
    const before = server.requests.length;
    for (const impl of ["ours", "upstream"] as const) {
      const r = await pi(impl, ["@missing.md", "question"]);
      expect(r.code, impl).toBe(1);
      expect(r.stderr.toLowerCase(), impl).toContain(`file not found: ${join(project, "missing.md")}`.toLowerCase());
    }
    expect(server.requests.length).toBe(before);
  }, 120_000);
});
