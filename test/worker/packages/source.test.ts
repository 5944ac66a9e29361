import { describe, expect, it } from "vitest";
import { packageIdentity, parsePackageSource } from "../../../worker/packages/source.js";

describe("parsePackageSource", () => {
  it.each([
    ["npm:@scope/tools", { type: "npm", spec: "@scope/tools", name: "@scope/tools", pinned: false }],
    ["npm:@scope/tools@1.2.3", { type: "npm", name: "@scope/tools", version: "1.2.3", pinned: true }],
    ["npm:tools@^1.2.0", { type: "npm", name: "tools", version: "^1.2.0", pinned: false }],
    ["npm:demo@file:/tmp/demo-1.0.0.tgz", { type: "npm", name: "demo", version: "file:/tmp/demo-1.0.0.tgz" }],
    [
      "git:github.com/acme/tools@v1",
      {
        type: "git",
        repo: "https://github.com/acme/tools",
        host: "github.com",
        path: "acme/tools",
        ref: "v1",
        pinned: true,
      },
    ],
    ["git:git@github.com:acme/tools.git", { type: "git", repo: "git@github.com:acme/tools.git", path: "acme/tools" }],
    ["https://gitlab.com/acme/tools", { type: "git", host: "gitlab.com", path: "acme/tools", pinned: false }],
    ["ssh://git@host.dev/acme/tools@abc123", { type: "git", host: "host.dev", path: "acme/tools", ref: "abc123" }],
    ["./pkg", { type: "local", path: "./pkg" }],
    ["git:nohost/acme/tools", { type: "local" }],
    ["git:github.com/../../etc", { type: "local" }],
  ])("reads %s", (source, expected) => {
    expect(parsePackageSource(source)).toMatchObject(expected);
  });
});

describe("packageIdentity", () => {
  it("is the same for every version of an npm package and every protocol and ref of a repository", () => {
    expect(packageIdentity("npm:tools@1.0.0", "/a", "/home/u")).toBe(packageIdentity("npm:tools", "/b", "/home/u"));
    expect(packageIdentity("git:git@github.com:acme/tools@v2", "/a", "/home/u")).toBe(
      packageIdentity("https://github.com/acme/tools", "/b", "/home/u"),
    );
  });

  it("resolves a local path against the folder of the settings file that holds it", () => {
    expect(packageIdentity("../pkg", "/home/u/.pi/agent", "/home/u")).toBe("local:/home/u/.pi/pkg");
    expect(packageIdentity("~/pkg", "/anywhere", "/home/u")).toBe("local:/home/u/pkg");
  });
});
