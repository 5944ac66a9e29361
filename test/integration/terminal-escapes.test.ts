/**
 * A tool's output that holds terminal escapes (a window title, a screen clear) reaches
 * `pi-orch prompt --wait` and `logs` as visible text, never as escapes the person's
 * terminal obeys; `logs --json` keeps the bytes as data.
 */
import { afterEach, expect, it } from "vitest";
import { World } from "../support/orch-cli.js";

let world: World | undefined;
afterEach(async () => {
  await world?.cleanup();
  world = undefined;
});

const RAW = /[\x00-\x08\x0b-\x1f\x7f]/;

it("prompt --wait and logs print a tool's \\033]0;PWNED\\007\\033[2J as visible escapes; logs --json keeps them", async () => {
  world = new World();
  await world.serve();
  await world.ok(["spawn", "--name", "esc", "--provider", "faux"]);
  const waited = await world.cli(["prompt", "esc", 'run `printf "\\033]0;PWNED\\007\\033[2Jhi\\n"`', "--wait"]);
  expect(waited.code).toBe(0);
  expect(waited.stdout).toContain("\\x1b]0;PWNED\\x07\\x1b[2Jhi");
  expect(RAW.test(waited.stdout)).toBe(false);

  const logs = await world.ok(["logs", "esc"]);
  expect(logs).toContain("\\x1b]0;PWNED\\x07\\x1b[2Jhi");
  expect(RAW.test(logs)).toBe(false);

  const json = await world.ok(["logs", "esc", "--json"]);
  expect(json).toContain("\\u001b]0;PWNED\\u0007\\u001b[2Jhi");
  const parsed = json
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  expect(JSON.stringify(parsed)).toContain("\\u001b]0;PWNED");
});
