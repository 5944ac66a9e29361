/** `pi mcp --help` names the agent directory this start uses and shows examples. */
import { describe, expect, it } from "vitest";
import { runMcpCommand } from "../../cli/mcp-command.js";

describe("pi mcp --help", () => {
  it("names the mcp.json of the agent directory in use, not pi's default, and has examples", async () => {
    const lines: string[] = [];
    const code = await runMcpCommand(["--help"], { cwd: "/tmp", home: "/srv/fleet/agent", log: (l) => lines.push(l) });
    expect(code).toBe(0);
    const text = lines.join("\n");
    expect(text).toContain("Reads /srv/fleet/agent/mcp.json");
    expect(text).not.toContain("~/.pi/agent");
    expect(text).toMatch(/Examples:\n {2}pi mcp add /);
    expect(text).toContain("pi mcp add gh --env 'GITHUB_TOKEN=${GITHUB_TOKEN}' -- gh-mcp");
  });
});
