import { execFile, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { connectorStillThere, parseCredLines, processStart, readPeerCreds } from "../../ipc/peer-cred.js";
import { PeerFinder } from "../../ipc/peer.js";

const run = promisify(execFile);

describe("parseCredLines", () => {
  it("reads one `pid uid gid` per descriptor and null for a line that says why not", () => {
    expect(parseCredLines("12 1000 1000\n- getsockopt Bad file descriptor\n7 0 0\n", 4)).toEqual([
      { pid: 12, uid: 1000, gid: 1000 },
      null,
      { pid: 7, uid: 0, gid: 0 },
      null,
    ]);
  });
});

describe("connectorStillThere", () => {
  const cases: [string, { state: string; startTicks: number } | undefined, boolean][] = [
    ["a live process started before the accept", { state: "S", startTicks: 900 }, true],
    ["one started in the same tick", { state: "R", startTicks: 1000 }, true],
    ["a pid reused by a process started after the accept", { state: "S", startTicks: 1001 }, false],
    ["a zombie (it ended, not yet reaped)", { state: "Z", startTicks: 900 }, false],
    ["a process that is gone", undefined, false],
    ["an unreadable start time", { state: "S", startTicks: Number.NaN }, false],
  ];
  it.each(cases)("%s", (_, start, expected) => {
    expect(connectorStillThere(start, 1000)).toBe(expected);
  });

  it("this process started before now", () => {
    expect(connectorStillThere(processStart(process.pid), Number.MAX_SAFE_INTEGER)).toBe(true);
  });
});

const hasPerl = !(await run("perl", ["-e", "1"]).then(
  () => null,
  (e: unknown) => e,
));
/** Can uid 65534 (nobody) run node here? Then a real second user's client is tried. */
const otherUid =
  process.getuid?.() === 0 &&
  (await run("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, "-e", "0"]).then(
    () => true,
    () => false,
  ));

describe.skipIf(process.platform !== "linux")("the connecting process, from the kernel", () => {
  let server: Server | undefined;
  let dir: string | undefined;
  const accepted: Socket[] = [];
  afterEach(async () => {
    for (const s of accepted.splice(0)) s.destroy();
    await new Promise((r) => (server ? server.close(r) : r(undefined)));
    server = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function listen(): Promise<string> {
    dir = mkdtempSync(join(tmpdir(), "pi-orch-cred-"));
    const path = join(dir, "s.sock");
    server = createServer((s) => {
      s.on("error", () => {});
      accepted.push(s);
    });
    await new Promise<void>((r) => server!.listen(path, r));
    return path;
  }

  async function acceptedCount(n: number): Promise<void> {
    while (accepted.length < n) await new Promise((r) => setTimeout(r, 10));
  }

  it.skipIf(!hasPerl)("reads SO_PEERCRED of several connections in one run: this process and a child", async () => {
    const path = await listen();
    const own = connect(path);
    await new Promise((r) => own.once("connect", r));
    await acceptedCount(1);
    const child = spawn(process.execPath, [
      "-e",
      `require("net").connect(${JSON.stringify(path)}); setInterval(() => {}, 1000)`,
    ]);
    try {
      await acceptedCount(2);
      const fds = accepted.map((s) => (s as unknown as { _handle: { fd: number } })._handle.fd);
      const read = await readPeerCreds(fds);
      expect(read).toEqual({
        ok: true,
        creds: [
          { pid: process.pid, uid: process.getuid!(), gid: process.getgid!() },
          { pid: child.pid, uid: process.getuid!(), gid: process.getgid!() },
        ],
      });
      // The sockets stay usable here: the helper only held copies.
      const got = new Promise((r) => own.once("data", r));
      accepted[0]!.write("still here\n");
      expect(String(await got)).toBe("still here\n");
    } finally {
      child.kill("SIGKILL");
      own.destroy();
    }
  });

  it("says perl is missing when it is, so the caller takes the ss way", async () => {
    const path = await listen();
    const own = connect(path);
    await acceptedCount(1);
    const fd = (accepted[0] as unknown as { _handle: { fd: number } })._handle.fd;
    const read = await readPeerCreds([fd], join(dir!, "no-such-perl"));
    own.destroy();
    expect(read).toMatchObject({ ok: false, missing: true });
  });

  it.skipIf(!otherUid)("names another user's client by its uid, whichever way the finder takes", async () => {
    const path = await listen();
    // Opened only for this test: the supervisor's own home never is (ipc/server.ts).
    chmodSync(dir!, 0o711);
    chmodSync(path, 0o666);
    const child = spawn("setpriv", [
      "--reuid=65534",
      "--regid=65534",
      "--clear-groups",
      process.execPath,
      "-e",
      `require("net").connect(${JSON.stringify(path)}); setInterval(() => {}, 1000)`,
    ]);
    try {
      await acceptedCount(1);
      for (const finder of [new PeerFinder(), new PeerFinder({ perl: join(dir!, "no-such-perl") })]) {
        const found = await finder.lookup(accepted[0]!);
        expect(found).toMatchObject({ kind: "found", uids: [65534] });
      }
    } finally {
      child.kill("SIGKILL");
    }
  });
});
