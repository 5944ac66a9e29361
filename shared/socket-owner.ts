/**
 * Which process listens on a Unix socket, from Linux's `/proc/net/unix` (the socket's
 * inode) and `/proc/PID/fd` (who holds it). Used to name the supervisor's pid in the
 * error when it stops answering: a SIGSTOPped or hung process still holds its socket.
 * Undefined elsewhere than Linux, or when the holder is not readable (another user).
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/** The inodes of listening sockets bound to `path`, from the text of `/proc/net/unix`. Pure. */
export function listeningInodes(procNetUnix: string, path: string): string[] {
  const inodes: string[] = [];
  for (const line of procNetUnix.split("\n").slice(1)) {
    // Num RefCount Protocol Flags Type St Inode Path
    const fields = line.trim().split(/\s+/);
    if (fields.length < 8 || fields.slice(7).join(" ") !== path) continue;
    // Flags 00010000 is __SO_ACCEPTCON: a listening socket.
    if ((Number.parseInt(fields[3]!, 16) & 0x10000) === 0) continue;
    inodes.push(fields[6]!);
  }
  return inodes;
}

/** The pid of the process listening on the Unix socket `path`, when it can be found. */
export function socketListenerPid(path: string): number | undefined {
  let table: string;
  try {
    table = readFileSync("/proc/net/unix", "utf8");
  } catch {
    return undefined;
  }
  const wanted = new Set(listeningInodes(table, path));
  if (wanted.size === 0) return undefined;
  for (const pids of socketHolders(wanted).values()) if (pids[0] !== undefined) return pids[0];
  return undefined;
}

/** Pids holding each of the socket `inodes` (seen as `socket:[N]` in `/proc/PID/fd`; other users' are not readable). */
export function socketHolders(inodes: ReadonlySet<string>): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue; // gone, or another user's
    }
    for (const fd of fds) {
      let link: string;
      try {
        link = readlinkSync(`/proc/${entry}/fd/${fd}`);
      } catch {
        continue; // closed meanwhile
      }
      const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
      if (inode === undefined || !inodes.has(inode)) continue;
      const pids = out.get(inode) ?? [];
      if (!pids.includes(Number(entry))) pids.push(Number(entry));
      out.set(inode, pids);
    }
  }
  return out;
}
