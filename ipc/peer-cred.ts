/**
 * Who connected to a Unix socket, from the kernel's own record (Linux `SO_PEERCRED`: the
 * pid, uid and gid of the process that called `connect`). Node does not expose the
 * socket option, so a short `perl` (in every Debian, Ubuntu, Fedora and RHEL base
 * install) reads it from the accepted sockets, handed down as inherited descriptors:
 * one fork per batch of connections, instead of `ss -xp`'s dump of every socket of the
 * machine and every process's fds (half a second at a thousand agents). Where perl is
 * missing, the caller falls back to that dump (ipc/peer.ts).
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";

/** The kernel's credentials of the process that connected. */
export interface PeerCred {
  pid: number;
  uid: number;
  gid: number;
}

/** The answer for each socket of a batch, in order; `null` where the kernel said nothing (closed meanwhile). */
export type CredBatch = { ok: true; creds: (PeerCred | null)[] } | { ok: false; missing: boolean; reason: string };

/**
 * Reads SO_PEERCRED of the descriptors named in its arguments, one line each: `pid uid
 * gid`, or `- reason`. `struct ucred` is three 32-bit fields (pid_t, uid_t, gid_t).
 */
const READ_PEERCRED = `use strict; use Socket qw(SOL_SOCKET SO_PEERCRED);
for my $fd (@ARGV) {
  my ($s, $c);
  if (!open($s, "+<&=", $fd)) { print "- open $!\\n"; next; }
  if (!defined($c = getsockopt($s, SOL_SOCKET, SO_PEERCRED))) { print "- getsockopt $!\\n"; next; }
  my ($pid, $uid, $gid) = unpack("lLL", $c);
  print "$pid $uid $gid\\n";
}`;

/** Parse the helper's lines into one answer per descriptor asked about. Pure. */
export function parseCredLines(text: string, count: number): (PeerCred | null)[] {
  const lines = text.split("\n");
  return Array.from({ length: count }, (_, i) => {
    const m = /^(\d+) (\d+) (\d+)$/.exec(lines[i] ?? "");
    return m ? { pid: Number(m[1]), uid: Number(m[2]), gid: Number(m[3]) } : null;
  });
}

/**
 * SO_PEERCRED of each of `fds` (open descriptors of connected Unix sockets in this
 * process). The caller must keep every one open until this settles: a descriptor closed
 * and reused meanwhile would be read as someone else's. `perl` is the command to run
 * (tests name a missing one to take the fallback).
 */
export function readPeerCreds(fds: readonly number[], perl = "perl"): Promise<CredBatch> {
  return new Promise((resolve) => {
    // Each socket becomes descriptor 3, 4, ... in the helper. Its environment is only
    // PATH: no PERL5OPT or PERL5LIB of the supervisor's can change what it runs.
    const child = spawn(perl, ["-e", READ_PEERCRED, ...fds.map((_, i) => String(i + 3))], {
      stdio: ["ignore", "pipe", "pipe", ...fds],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      timeout: 10_000,
    });
    let out = "";
    let err = "";
    child.stdout?.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.stderr?.setEncoding("utf8").on("data", (d: string) => (err += d));
    child.once("error", (e: NodeJS.ErrnoException) =>
      resolve({ ok: false, missing: e.code === "ENOENT", reason: `${perl} could not run: ${e.message}` }),
    );
    child.once("close", (code, signal) => {
      if (code === 0) return resolve({ ok: true, creds: parseCredLines(out, fds.length) });
      resolve({
        ok: false,
        missing: false,
        reason: `${perl} reading SO_PEERCRED ended with ${signal ?? `exit code ${code}`}: ${err.trim().slice(0, 300)}`,
      });
    });
  });
}

/** Clock ticks since boot now, in the unit of `/proc/PID/stat`'s start time (USER_HZ, 100 on Linux). */
export function bootTicksNow(): number | undefined {
  try {
    return Math.floor(Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]) * 100);
  } catch {
    return undefined;
  }
}

/** A process's state and start time (ticks since boot) from `/proc/PID/stat`; undefined when gone. */
export function processStart(pid: number): { state: string; startTicks: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // After the command name's last ")": state is field 3, starttime field 22.
    const rest = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { state: rest[0] ?? "", startTicks: Number(rest[19]) };
  } catch {
    return undefined;
  }
}

/**
 * Whether the process the kernel recorded as the connector is still the one with that
 * pid. SO_PEERCRED keeps the pid of the `connect` call; once that process has ended, the
 * pid may be taken by a newer process (of anyone), which started after the connection
 * was made. A live process that started no later than `acceptedTicks` (when the
 * connection was first seen here, a moment after it was made) is taken as the connector:
 * a pid reused in between would need every other pid (32,768 by default) to be used up
 * in that moment. Pure.
 */
export function connectorStillThere(
  start: { state: string; startTicks: number } | undefined,
  acceptedTicks: number,
): boolean {
  if (start === undefined || start.state === "Z" || start.state === "X") return false;
  return Number.isFinite(start.startTicks) && start.startTicks <= acceptedTicks;
}
