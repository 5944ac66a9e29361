/**
 * `pi --sandbox on|strict` (`on` is the default where bwrap works, see chooseSandbox):
 * the launcher starts `pi` again inside bubblewrap (see
 * shared/sandbox.ts) with the same arguments and waits for it, passing on its exit. The
 * terminal, stdin and stdout are the sandboxed pi's own (inherited), so RPC, print and the
 * interactive mode work as outside. What it may write: the project, the agent directory
 * (sessions, trust), /tmp (private under strict), the tool caches (under on) and
 * `--sandbox-write` folders; the pi-orch home is hidden.
 *
 * Where node can put another program in its own place (`process.execve`, Node 22.15 and
 * later) and perl is installed, the launcher does so: a perl waiter of ~1 MB of its own,
 * instead of this node's tens of MB, waits for bubblewrap for as long as pi runs.
 */
import { spawn } from "node:child_process";
import { accessSync, constants, mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { agentDir, piOrchHome } from "../shared/paths.js";
import { isDeadState, readProcTable } from "../shared/proc.js";
import { workerMallocEnv } from "../shared/malloc-env.js";
import {
  bwrapArgs,
  programFolders,
  SANDBOX_DEFAULT_VAR,
  SANDBOXED_VAR,
  onPath,
  sandboxSupport,
  toolCaches,
} from "../shared/sandbox.js";

/** `PI_ORCH_SANDBOX_WAITER=node`: the launcher's node waits for bubblewrap, as on Node 20 (for comparison). */
const SANDBOX_WAITER_VAR = "PI_ORCH_SANDBOX_WAITER";

/**
 * The waiter, run as `perl -e WAITER -- BWRAP ARGS...` in the launcher's place: what the
 * launcher's node does below, in a process of ~1 MB. It starts bubblewrap, passes SIGTERM
 * and SIGHUP on to the sandboxed pi (see sandboxedPi), ignores SIGINT (Ctrl+C reaches pi
 * through the terminal's process group), and ends as bubblewrap did: its exit code, or its
 * signal. node ignores SIGPIPE and SIGXFSZ, and an ignored signal stays ignored across
 * exec: both are put back for bubblewrap and pi.
 */
const WAITER = String.raw`
use strict;
$0 = "pi-sandbox";
$SIG{PIPE} = $SIG{XFSZ} = "DEFAULT";
my $child = 0;
sub children_of {
  my %kids;
  opendir(my $dir, "/proc") or return ();
  for my $pid (grep { /^\d+$/ } readdir $dir) {
    open(my $stat, "<", "/proc/$pid/stat") or next;
    my $line = <$stat>;
    push @{ $kids{$2} }, $pid if defined $line && $line =~ /^\d+ \(.*\) (\S) (\d+)/s && $1 ne "Z";
  }
  return map { @{ $kids{$_} || [] } } @_;
}
sub pass_on {
  return unless $child;
  my @pi = children_of(children_of($child));
  kill $_[0], (@pi ? @pi : $child);
}
$SIG{$_} = \&pass_on for qw(TERM HUP);
$SIG{INT} = "IGNORE";
$child = fork();
if (!defined $child) { print STDERR "pi: could not start bwrap: $!\n"; exit 1 }
if ($child == 0) {
  $SIG{$_} = "DEFAULT" for qw(TERM HUP INT);
  exec { $ARGV[0] } @ARGV;
  print STDERR "pi: could not start bwrap ($ARGV[0]): $!\n";
  exit 1;
}
my $status;
while (1) {
  my $pid = waitpid($child, 0);
  if ($pid == $child) { $status = $?; last }
  if ($pid == -1 && !$!{EINTR}) { exit 1 }
}
if (my $signal = $status & 127) {
  $SIG{$_} = "DEFAULT" for qw(TERM HUP INT);
  kill $signal, $$;
  exit 128 + $signal;
}
exit($status >> 8);
`;

/** The sandbox flags of a `pi` command line, read before anything loads. */
export interface SandboxFlags {
  mode: string | undefined;
  writable: string[];
  /** `--session-dir DIR` and `--home DIR`: folders the worker writes to besides its agent directory. */
  dirs: string[];
  /** Which flag gave each of `dirs`. */
  dirKinds: ("home" | "session")[];
  /** `--help`, `--version`, `--export`: nothing runs, so nothing to sandbox. */
  readOnly: boolean;
}

/** Scan argv (after node and the script) for the flags the launcher acts on. */
export function sandboxFlags(args: readonly string[]): SandboxFlags {
  const out: SandboxFlags = { mode: undefined, writable: [], dirs: [], dirKinds: [], readOnly: false };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") break;
    const eq = arg.indexOf("=");
    const [name, inline] = arg.startsWith("--") && eq > 0 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, undefined];
    const value = () => inline ?? args[++i];
    if (name === "--sandbox") out.mode = value();
    else if (name === "--sandbox-write") out.writable.push(value() ?? "");
    else if (name === "--session-dir" || name === "--home") {
      const dir = value();
      if (dir) {
        out.dirs.push(dir);
        out.dirKinds.push(name === "--home" ? "home" : "session");
      }
    } else if (["--help", "-h", "--version", "-v", "--export"].includes(name)) out.readOnly = true;
  }
  out.writable = out.writable.filter(Boolean);
  return out;
}

/** Where a `pi` command line runs: in a sandbox of `mode`, or unboxed (with a `notice` when that was not asked for). */
export type SandboxChoice = ({ mode: "on" | "strict" } | { mode: "off"; notice?: string }) & {
  /** Said whatever the mode: a PI_ORCH_SANDBOX value that is no mode (the default applies, never "off"). */
  warning?: string;
};

/**
 * The sandbox of a `pi` command line: `--sandbox`, else PI_ORCH_SANDBOX, else `on` where
 * bwrap works (issue 31: a sandbox per agent, on by default where it works). Where it does
 * not, pi runs unboxed and the notice says why and how to say that is meant. `--help`,
 * `--version` and `--export` run nothing, so they stay outside; a value that is not a mode
 * runs as is (pi's option check names it).
 */
export function chooseSandbox(flags: SandboxFlags, env: NodeJS.ProcessEnv): SandboxChoice {
  if (flags.readOnly) return { mode: "off" };
  const fromEnv = env[SANDBOX_DEFAULT_VAR] || undefined;
  // A typo (`strcit`) must not run unboxed: it is said, and the default applies.
  const bad = fromEnv !== undefined && fromEnv !== "off" && fromEnv !== "on" && fromEnv !== "strict";
  const warning = bad
    ? `pi: ${SANDBOX_DEFAULT_VAR}=${fromEnv} is not off, on or strict; using the default (on where bubblewrap works)`
    : undefined;
  const said = warning ? { warning } : {};
  const asked = flags.mode ?? (bad ? undefined : fromEnv);
  if (asked !== undefined)
    return asked === "on" || asked === "strict" ? { mode: asked, ...said } : { mode: "off", ...said };
  const support = sandboxSupport();
  if (support.ok) return { mode: "on", ...said };
  return {
    mode: "off",
    notice: `pi: running without a sandbox: ${support.reason}; --sandbox off (or ${SANDBOX_DEFAULT_VAR}=off) runs unboxed without this notice`,
    ...said,
  };
}

/**
 * The sandboxed pi of the bubblewrap process `bwrap`: bwrap's children's children (with
 * `--unshare-pid`, bwrap starts an init in the new namespace, and pi is its child). SIGTERM
 * and SIGHUP go to pi itself, which ends cleanly on them: bwrap would die of them, and its
 * namespace's init with it, which SIGKILLs every process inside.
 */
function sandboxedPi(bwrap: number, table = readProcTable() ?? []): number[] {
  const children = (parents: number[]) =>
    table.filter((p) => parents.includes(p.ppid) && !isDeadState(p.state)).map((p) => p.pid);
  return children(children([bwrap]));
}

/** Whether this process may execute `file`. */
function runnable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Run this `pi` again inside the sandbox; resolves never (the process exits as the inner one did). */
export function execInSandbox(mode: "on" | "strict", flags: SandboxFlags): void {
  const support = sandboxSupport();
  if (!support.ok) {
    process.stderr.write(`pi: --sandbox ${mode} cannot run: ${support.reason}; or run with --sandbox off\n`);
    process.exit(1);
  }
  // The agent directory always (its models.json, settings, auth), `--home`'s when given, and
  // a `--session-dir` beside it: a session folder alone hid the agent directory's files.
  const agent = [
    ...new Set([...(flags.dirKinds.includes("home") ? [] : [agentDir()]), ...flags.dirs.map((d) => resolve(d))]),
  ];
  // A folder bwrap binds must exist; the agent directory is pi's to have anyway.
  for (const dir of agent) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const fleetHome = process.env.PI_ORCH_HOME ? [resolve(process.env.PI_ORCH_HOME)] : [];
  const args = bwrapArgs({
    mode,
    cwd: process.cwd(),
    writable: [...agent, ...flags.writable, ...(mode === "on" ? toolCaches() : [])],
    hidden: [piOrchHome({}), ...fleetHome],
    // This pi itself, wherever it is installed (under /tmp, `strict` would hide it; `on`
    // shows /tmp as it is, and binding a symlinked `pi` there onto itself fails).
    reveal: mode === "strict" ? programFolders([process.execPath, process.argv[1] ?? ""]) : [],
  });
  const argv = [...args, process.execPath, ...process.execArgv, ...process.argv.slice(1)];
  // The inner pi's malloc settings (shared/malloc-env.ts), which it takes out before its tools start.
  const env = { ...process.env, ...workerMallocEnv(process.env), [SANDBOXED_VAR]: mode };
  const execve = (process as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never }).execve;
  const perl = execve && process.env[SANDBOX_WAITER_VAR] !== "node" ? onPath("perl", process.env) : undefined;
  // node aborts the whole process when execve(2) fails (EACCES...), so only a perl that can run.
  if (execve && perl && runnable(perl)) execve(perl, ["perl", "-e", WAITER, "--", support.bwrap, ...argv], env);
  const child = spawn(support.bwrap, argv, { stdio: "inherit", env });
  // Ctrl+C reaches both through the terminal's process group: only the inner pi acts on it.
  process.on("SIGINT", () => undefined);
  for (const signal of ["SIGTERM", "SIGHUP"] as const)
    process.on(signal, () => {
      const pi = child.pid === undefined ? [] : sandboxedPi(child.pid);
      if (pi.length === 0) child.kill(signal);
      for (const pid of pi) process.kill(pid, signal);
    });
  child.on("error", (err) => {
    process.stderr.write(`pi: could not start bwrap (${support.bwrap}): ${err.message}\n`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    }
    process.exit(code ?? 1);
  });
}
