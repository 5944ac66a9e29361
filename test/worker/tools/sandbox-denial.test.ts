import { describe, expect, it } from "vitest";
import { sandboxBashDenial, sandboxWriteDenial } from "../../../worker/tools/sandbox-denial.js";

describe("sandboxWriteDenial", () => {
  it.each([
    { code: "EROFS", env: { PI_ORCH_SANDBOXED: "on" }, says: true },
    { code: "EROFS", env: { PI_ORCH_SANDBOXED: "strict" }, says: true },
    { code: "EROFS", env: {}, says: false },
    { code: "EROFS", env: { PI_ORCH_SANDBOXED: "off" }, says: false },
    { code: "EACCES", env: { PI_ORCH_SANDBOXED: "on" }, says: false },
    { code: undefined, env: { PI_ORCH_SANDBOXED: "on" }, says: false },
  ])("$code with PI_ORCH_SANDBOXED=$env.PI_ORCH_SANDBOXED: names the box: $says", ({ code, env, says }) => {
    const text = sandboxWriteDenial("../x/y.txt", "/srv/x/y.txt", code, env);
    expect(text !== undefined).toBe(says);
  });

  it("names the file, the mode and the flag that opens its folder", () => {
    const text = sandboxWriteDenial("notes.txt", "/srv/data/notes.txt", "EROFS", { PI_ORCH_SANDBOXED: "strict" });
    expect(text).toContain("Cannot write notes.txt (resolved to /srv/data/notes.txt)");
    expect(text).toContain("--sandbox strict");
    expect(text).toContain("--sandbox-write /srv/data");
    expect(text).toContain("--sandbox off");
  });
});

describe("sandboxBashDenial", () => {
  const refused = "touch: cannot touch '/srv/x': Read-only file system";
  it.each([
    { output: refused, exit: 1, env: { PI_ORCH_SANDBOXED: "on" }, says: true },
    { output: refused, exit: 1, env: {}, says: false },
    { output: refused, exit: 0, env: { PI_ORCH_SANDBOXED: "on" }, says: false },
    { output: "No such file or directory", exit: 1, env: { PI_ORCH_SANDBOXED: "on" }, says: false },
  ])(
    "exit $exit, $output, PI_ORCH_SANDBOXED=$env.PI_ORCH_SANDBOXED: notes the box: $says",
    ({ output, exit, env, says }) => {
      expect(sandboxBashDenial(output, exit, env) !== undefined).toBe(says);
    },
  );

  it("names the mode and the flags that open a folder", () => {
    const text = sandboxBashDenial(refused, 1, { PI_ORCH_SANDBOXED: "strict" });
    expect(text).toContain("--sandbox strict");
    expect(text).toContain("--sandbox-write DIR");
    expect(text).toContain("--sandbox off");
  });
});
