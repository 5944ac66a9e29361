import { createServer } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { listeningInodes, socketListenerPid } from "../../shared/socket-owner.js";

const TABLE = `Num       RefCount Protocol Flags    Type St Inode Path
0000000000000000: 00000002 00000000 00010000 0001 01 4242 /home/me/.pi-orch/orch.sock
0000000000000000: 00000003 00000000 00000000 0001 03 4243 /home/me/.pi-orch/orch.sock
0000000000000000: 00000002 00000000 00010000 0001 01 4244 /other/with space.sock
0000000000000000: 00000003 00000000 00000000 0001 03 4245
`;

it.each([
  ["/home/me/.pi-orch/orch.sock", ["4242"]],
  ["/other/with space.sock", ["4244"]],
  ["/nowhere.sock", []],
])("the listening inodes of %s in /proc/net/unix", (path, want) => {
  expect(listeningInodes(TABLE, path)).toEqual(want);
});

it("finds this process as the listener of a socket it serves", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sock-owner-"));
  const server = createServer();
  try {
    const path = join(dir, "s.sock");
    await new Promise<void>((r) => server.listen(path, r));
    expect(socketListenerPid(path)).toBe(process.pid);
    expect(socketListenerPid(join(dir, "none.sock"))).toBeUndefined();
  } finally {
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  }
});
