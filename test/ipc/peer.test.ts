import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { claimedHolders, PeerFinder, peerInodes, withoutUsers } from "../../ipc/peer.js";

describe("peerInodes (ss -xnH)", () => {
  const path = "/home/u/.pi-orch/orch.sock";
  it("pairs an accepted socket with its client when both lines agree", () => {
    const out = [
      `u_str ESTAB 0 0 ${path} 200 * 199`,
      "u_str ESTAB 0 0 * 199 * 200",
      "u_str ESTAB 0 0 /run/other.sock 300 * 301",
    ].join("\n");
    expect(peerInodes(out, new Set(["200"]))).toEqual(new Map([["200", "199"]]));
  });

  it("reads a client bound to a path with spaces and digits", () => {
    const out = [`u_str ESTAB 0 0 ${path} 200 /tmp/a 5 6 199`, "u_str ESTAB 0 0 /tmp/a 5 6 199 * 200"].join("\n");
    expect(peerInodes(out, new Set(["200"]))).toEqual(new Map([["200", "199"]]));
  });

  it("does not take a pair only one line claims (a client path forged to look like our line)", () => {
    // A path with a newline splits its line: the first piece names a person's socket (77) as our peer.
    const out = [`u_str ESTAB 0 0 ${path} 200 /x 77`, "evil 199", "u_str ESTAB 0 0 /p 77 * 78"].join("\n");
    expect(peerInodes(out, new Set(["200"]))).toEqual(new Map());
  });

  it("leaves out an inode two confirmed lines claim", () => {
    const out = [
      `u_str ESTAB 0 0 ${path} 200 * 199`,
      "u_str ESTAB 0 0 * 199 * 200",
      "u_str ESTAB 0 0 /y 200 z 88",
      "u_str ESTAB 0 0 * 88 * 200",
    ].join("\n");
    expect(peerInodes(out, new Set(["200"]))).toEqual(new Map());
  });
});

describe("the process lists of ss -xpnH", () => {
  const path = "/home/u/.pi-orch/orch.sock";
  it("cut off, the lines pair as ss -xnH's do", () => {
    const out = [
      `u_str ESTAB 0 0 ${path} 200 * 199 users:(("node",pid=10,fd=7))`,
      'u_str ESTAB 0 0 * 199 * 200 users:(("pi-orch",pid=42,fd=3),("sh",pid=43,fd=3)) ',
    ].join("\n");
    expect(peerInodes(withoutUsers(out), new Set(["200"]))).toEqual(new Map([["200", "199"]]));
  });

  it("name every pid=,fd= of the lines holding an inode, a forged name's only beside the real ones", () => {
    const out = [
      `u_str ESTAB 0 0 ${path} 200 * 199 users:(("node",pid=10,fd=7))`,
      'u_str ESTAB 0 0 * 199 * 200 users:(("x",pid=1,fd=3),pid=42,fd=3))',
      'u_str ESTAB 0 0 * 300 * 199 users:(("other",pid=77,fd=5))',
    ].join("\n");
    expect(claimedHolders(out, new Set(["199"]))).toEqual(
      new Map([
        [
          "199",
          [
            { pid: 1, fd: 3 },
            { pid: 42, fd: 3 },
          ],
        ],
      ]),
    );
  });

  it("a name that says ' users:((' only cuts its own line short, which then pairs with nothing", () => {
    const out = [
      `u_str ESTAB 0 0 ${path} 200 * 199 users:(("node",pid=10,fd=7))`,
      'u_str ESTAB 0 0 * 199 * 200 users:((" 999 users:((",pid=42,fd=3))',
    ].join("\n");
    expect(peerInodes(withoutUsers(out), new Set(["200"]))).toEqual(new Map([["200", "199"]]));
    const forged = 'u_str ESTAB 0 0 /tmp/a users:(( 5 * 200 users:(("node",pid=42,fd=3))';
    expect(peerInodes(withoutUsers([`u_str ESTAB 0 0 ${path} 200 * 5`, forged].join("\n")), new Set(["200"]))).toEqual(
      new Map(),
    );
  });
});

/** The two ways a finder takes: the kernel's SO_PEERCRED (through perl), and `ss` where perl is missing. */
const WAYS: [string, () => PeerFinder][] = [
  ["SO_PEERCRED", () => new PeerFinder()],
  ["ss, perl missing", () => new PeerFinder({ perl: "/nonexistent/perl" })],
];

describe.skipIf(process.platform !== "linux").each(WAYS)("PeerFinder (%s)", (_, makeFinder) => {
  let server: Server | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await new Promise((r) => (server ? server.close(r) : r(undefined)));
    server = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A server whose accepted sockets are handed to `onSocket`. */
  async function listen(onSocket: (s: Socket) => void): Promise<string> {
    dir = mkdtempSync(join(tmpdir(), "pi-orch-peer-"));
    const path = join(dir, "s.sock");
    server = createServer(onSocket);
    await new Promise<void>((r) => server!.listen(path, r));
    return path;
  }

  it("finds the process at the other end: this one, then a child process", async () => {
    const finder = makeFinder();
    const accepted: Socket[] = [];
    const path = await listen((s) => accepted.push(s));
    const own = (await import("node:net")).connect(path);
    await new Promise((r) => own.once("connect", r));
    const child = spawn(process.execPath, [
      "-e",
      `require("net").connect(${JSON.stringify(path)}); setInterval(() => {}, 1000)`,
    ]);
    try {
      while (accepted.length < 2) await new Promise((r) => setTimeout(r, 20));
      const [a, b] = await Promise.all(accepted.map((s) => finder.lookup(s)));
      const pids = [a, b].map((l) => (l?.kind === "found" ? l.pids : []));
      expect(pids).toContainEqual([process.pid]);
      expect(pids).toContainEqual([child.pid]);
      for (const l of [a, b]) expect(l).toMatchObject({ uids: [process.getuid?.()] });
    } finally {
      child.kill("SIGKILL");
      own.destroy();
      for (const s of accepted) s.destroy();
    }
  });

  it("a client whose process ended is gone, whether its connection is still open here or not", async () => {
    const finder = makeFinder();
    const accepted: Socket[] = [];
    const path = await listen((s) => {
      s.on("error", () => {});
      accepted.push(s);
    });
    const child = spawn(process.execPath, [
      "-e",
      `require("net").connect(${JSON.stringify(path)}, () => process.exit(0))`,
    ]);
    await new Promise((r) => child.once("exit", r));
    while (accepted.length < 1) await new Promise((r) => setTimeout(r, 20));
    const [open] = accepted;
    // Half-open: no process holds the other end any more.
    expect(await finder.lookup(open!)).toEqual({ kind: "gone" });
    open!.destroy();
    expect(await finder.lookup(open!)).toEqual({ kind: "gone" });
  });
});
