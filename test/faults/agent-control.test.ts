/**
 * Fault: a model told to command the fleet from its own bash tool (`pi-orch rpc other
 * get_messages`, `pi-orch stop other`). The tool's environment carries no PI_ORCH_HOME,
 * and the CLI refuses to run under an agent's PI_ORCH_AGENT mark. (A guard against a
 * model following instructions, not a wall: the sandbox of issue 31 is the wall.)
 */
import { afterEach, expect, it } from "vitest";
import { BIN, type Json, World } from "../support/orch-cli.js";
import { figures } from "./support.js";

let world: World | undefined;
afterEach(async () => {
  await world?.cleanup();
  world = undefined;
});

/** The tool results of an agent's runs, from its event log. */
function toolOutputs(events: Json[]): string[] {
  return events
    .filter((e) => e.event?.type === "tool_execution_end")
    .map((e) => JSON.stringify(e.event.result?.content ?? ""));
}

it("an agent's bash can neither find the fleet's home nor list, read or stop another agent", async () => {
  world = new World();
  await world.serve();
  await world.ok(["spawn", "--name", "victim", "--provider", "faux"]);
  await world.ok(["spawn", "--name", "intruder", "--provider", "faux"]);
  const home = world.home.path;
  const attempts = [
    `echo home=\${PI_ORCH_HOME:-none} agent=\${PI_ORCH_AGENT:-none}`,
    `${process.execPath} ${BIN} --home ${home} list`,
    `${process.execPath} ${BIN} --home ${home} rpc victim '{"type":"get_messages"}'`,
    `${process.execPath} ${BIN} --home ${home} stop victim`,
  ];
  for (const command of attempts) await world.ok(["prompt", "intruder", `run \`${command}\``, "--wait"]);
  const outputs = toolOutputs(world.events("intruder"));
  expect(outputs).toHaveLength(4);
  expect(outputs[0]).toContain("home=none agent=intruder");
  for (const out of outputs.slice(1))
    expect(out).toContain('refusing to control agents from inside agent \\"intruder\\"');
  const victim: Json = await world.json(["status", "victim"]);
  expect(victim.status).toBe("idle");
  figures("agent-control", { attempts: attempts.length - 1, answered: 0, victim_status: victim.status });
}, 90_000);
