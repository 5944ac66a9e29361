/**
 * A real OpenSSH server for tests: `sshd -D` on a free 127.0.0.1 port with a
 * throw-away host key and user key in a temp folder (no system config, no password
 * logins), the ssh client command line that logs in with that key, and `stop()` that
 * ends the server and its session processes and removes the folder. Readiness is
 * sshd's own "Server listening" line.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { freePort } from "./redis-server.js";

const SSHD_PATHS = ["/usr/sbin/sshd", "/usr/local/sbin/sshd"];

/** Why ssh tests cannot run here, or null when sshd, ssh and ssh-keygen are installed. */
export function sshMissing(): string | null {
  if (!SSHD_PATHS.some((p) => existsSync(p)))
    return "sshd is not installed (apt-get install openssh-server; .ci/run installs it)";
  for (const tool of ["ssh", "ssh-keygen"]) {
    const r = spawnSync(tool, ["-V"], { encoding: "utf8" });
    if (r.error) return `${tool} is not installed (apt-get install openssh-client)`;
  }
  return null;
}

function keygen(file: string): void {
  const r = spawnSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "pi-orch-test", "-f", file], {
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(`ssh-keygen failed: ${r.stderr}`);
}

/** Direct children of a process (from /proc). */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** One sshd the test owns. */
export class SshServer {
  private proc: ChildProcess | null = null;
  private constructor(
    readonly port: number,
    readonly dir: string,
  ) {}

  /** Generate keys and a config, start sshd, wait until it listens. */
  static async start(): Promise<SshServer> {
    const dir = mkdtempSync(join(tmpdir(), "pi-orch-test-sshd-"));
    const server = new SshServer(await freePort(), dir);
    try {
      await server.launch();
    } catch (err) {
      await server.stop();
      throw err;
    }
    return server;
  }

  /** The private key the client logs in with. */
  get userKey(): string {
    return join(this.dir, "user_key");
  }

  /** `ssh -p PORT -i KEY -o … 127.0.0.1` as words of a command line (no secrets: a throw-away key). */
  sshCommand(): string {
    const options = [
      "StrictHostKeyChecking=no",
      "UserKnownHostsFile=/dev/null",
      "BatchMode=yes",
      "IdentitiesOnly=yes",
      "LogLevel=ERROR",
    ];
    return [
      "ssh",
      "-p",
      String(this.port),
      "-i",
      this.userKey,
      ...options.flatMap((o) => ["-o", o]),
      `${userInfo().username}@127.0.0.1`,
    ].join(" ");
  }

  private async launch(): Promise<void> {
    const dir = this.dir;
    keygen(join(dir, "host_key"));
    keygen(this.userKey);
    writeFileSync(join(dir, "authorized_keys"), readFileSync(`${this.userKey}.pub`), { mode: 0o600 });
    const config = [
      `Port ${this.port}`,
      "ListenAddress 127.0.0.1",
      `HostKey ${join(dir, "host_key")}`,
      `AuthorizedKeysFile ${join(dir, "authorized_keys")}`,
      `PidFile ${join(dir, "sshd.pid")}`,
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "PubkeyAuthentication yes",
      "PermitRootLogin prohibit-password",
      // The temp folder is not owned the way sshd wants a home's files to be.
      "StrictModes no",
      "UsePAM no",
      "PrintMotd no",
      "Subsystem sftp internal-sftp",
    ].join("\n");
    writeFileSync(join(dir, "sshd_config"), `${config}\n`);
    // Running as root, sshd wants its privilege separation folder (a package install makes it; a container may not have it).
    if (process.getuid?.() === 0) mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });
    const sshd = SSHD_PATHS.find((p) => existsSync(p))!;
    const proc = spawn(sshd, ["-D", "-e", "-f", join(dir, "sshd_config")], { stdio: ["ignore", "ignore", "pipe"] });
    this.proc = proc;
    await new Promise<void>((resolve, reject) => {
      let err = "";
      const onData = (chunk: Buffer) => {
        err += chunk.toString();
        if (/Server listening on 127\.0\.0\.1 port/.test(err)) {
          proc.stderr!.off("data", onData);
          proc.stderr!.resume();
          resolve();
        }
      };
      proc.stderr!.on("data", onData);
      proc.once("exit", (code) => reject(new Error(`sshd exited (${code}) before listening:\n${err}`)));
    });
  }

  /** The pid of the listening sshd. */
  get pid(): number {
    return this.proc!.pid!;
  }

  /** Stop sshd and every session process under it; remove the keys and config. */
  async stop(): Promise<void> {
    const proc = this.proc;
    this.proc = null;
    if (proc && proc.exitCode === null && proc.signalCode === null) {
      const sessions = childrenOf(proc.pid!);
      const gone = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGKILL");
      for (const pid of sessions) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
      await gone;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
