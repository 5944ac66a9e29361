/**
 * The command reaper: a small perl process between the worker and each unboxed bash
 * command. It makes itself a child subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`, which Node
 * cannot call), so every process the command starts stays below it: one that leaves its
 * group (`setsid`, `setpgid`) and clears its environment (`env -i`) is adopted by the
 * reaper when its parent exits, not by PID 1. Killing the reaper's subtree therefore kills
 * everything the command started, and the reaper waits for (reaps) every process it
 * adopts, so none lingers as a zombie. It lives as long as anything below it runs.
 *
 * Its parent-death signal (`PR_SET_PDEATHSIG`, SIGTERM) makes it kill its subtree when
 * the worker dies in any way, SIGKILL included. A SIGTERM from the worker does the same
 * (abort, timeout). On fd 3 it says `reaper 1` (or `reaper 0` when the kernel refused the
 * subreaper) and then, when the command's shell exits, `exit N` or `signal N`.
 *
 * Why perl: it is on every Debian-like system (perl-base is essential) and can make the
 * raw syscall; it starts in ~5 ms with no module loaded. Where there is no perl (or no
 * known prctl number), bash runs without it and the tool tag finds what it can.
 */
import { existsSync } from "node:fs";
import { constants } from "node:os";
import { delimiter, join } from "node:path";

/** `prctl`'s syscall number per Node architecture (Linux); the subreaper needs it, perl's `syscall` takes numbers only. */
const PRCTL_SYSCALL: Partial<Record<string, number>> = {
  x64: 157,
  arm64: 167,
  riscv64: 167,
  loong64: 167,
  arm: 172,
  ia32: 172,
  s390x: 172,
  ppc64: 171,
};

/**
 * The reaper's program, run as `perl -e REAPER -- PRCTL_NR WORKER_PID FILE ARGS...`. The
 * command runs in a process group of its own (so `$$` is its group id, as without the
 * reaper) with the signals perl changed put back.
 */
const REAPER = String.raw`
use strict;
my ($nr, $worker, @cmd) = @ARGV;
$0 = "pi-reaper";
open(my $ctl, "+<&=", 3) or die "pi: the command reaper has no fd 3: $!\n";
$SIG{PIPE} = "IGNORE";
sub tell_worker { syswrite($ctl, "$_[0]\n") }
sub kill_subtree {
  for (1 .. 50) {
    my %kids;
    opendir(my $dir, "/proc") or return;
    for my $pid (grep { /^\d+$/ } readdir $dir) {
      open(my $stat, "<", "/proc/$pid/stat") or next;
      my $line = <$stat>;
      next unless defined $line && $line =~ /^\d+ \(.*\) (\S) (\d+)/s;
      push @{ $kids{$2} }, $pid unless $1 eq "Z" || $1 eq "X";
    }
    my (@found, @todo);
    @todo = ($$);
    while (@todo) { my @k = @{ $kids{ shift @todo } || [] }; push @found, @k; push @todo, @k; }
    return unless @found;
    kill "KILL", @found;
  }
}
my $subreaper = syscall($nr, 36, 1, 0, 0, 0) == 0 ? 1 : 0;
syscall($nr, 1, 15, 0, 0, 0);
exit 0 if getppid() != $worker;
$SIG{TERM} = sub { kill_subtree() };
tell_worker("reaper $subreaper");
my $child = fork();
die "pi: the command reaper could not fork: $!\n" unless defined $child;
if ($child == 0) {
  $SIG{$_} = "DEFAULT" for qw(PIPE TERM);
  setpgrp(0, 0);
  close $ctl;
  exec { $cmd[0] } @cmd or exit 127;
}
close STDIN; close STDOUT; close STDERR;
while (1) {
  my $pid = waitpid(-1, 0);
  last if $pid == -1;
  tell_worker($? & 127 ? "signal " . ($? & 127) : "exit " . ($? >> 8)) if $pid == $child;
}
`;

/** Whether commands can run under the reaper here, and if not, why. */
export type ReaperSupport = { ok: true; perl: string; prctl: number } | { ok: false; reason: string };

let support: ReaperSupport | undefined;

/** Whether the reaper can run: Linux, a known prctl number, perl on PATH (looked up once). */
export function reaperSupport(): ReaperSupport {
  if (support) return support;
  const prctl = PRCTL_SYSCALL[process.arch];
  const perl = (process.env.PATH ?? "")
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, "perl"))
    .find((p) => existsSync(p));
  if (process.platform !== "linux") support = { ok: false, reason: `no child subreaper on ${process.platform}` };
  else if (prctl === undefined) support = { ok: false, reason: `no known prctl syscall number for ${process.arch}` };
  else if (!perl) support = { ok: false, reason: "perl is not installed (Debian/Ubuntu: apt install perl-base)" };
  else support = { ok: true, perl, prctl };
  return support;
}

/** The program and arguments that run `file args` under the reaper (spawn it detached, fd 3 a pipe). */
export function reaperCommand(
  reaper: Extract<ReaperSupport, { ok: true }>,
  file: string,
  args: readonly string[],
): [string, string[]] {
  return [reaper.perl, ["-e", REAPER, "--", String(reaper.prctl), String(process.pid), file, ...args]];
}

/** One line the reaper says on fd 3. */
export type ReaperLine =
  | { kind: "ready"; subreaper: boolean }
  | { kind: "exit"; code: number }
  | { kind: "signal"; signal: NodeJS.Signals };

/** Parse one line of the reaper's fd 3, or null for anything else. */
export function parseReaperLine(line: string): ReaperLine | null {
  const match = /^(reaper|exit|signal) (\d+)$/.exec(line.trim());
  if (!match) return null;
  const n = Number(match[2]);
  if (match[1] === "reaper") return { kind: "ready", subreaper: n === 1 };
  if (match[1] === "exit") return { kind: "exit", code: n };
  const name = Object.entries(constants.signals).find(([, number]) => number === n)?.[0];
  return name ? { kind: "signal", signal: name as NodeJS.Signals } : null;
}

let noticed = false;

/**
 * Say once on stderr that commands run without the reaper, why, and what escapes then: a
 * process that leaves its group and clears its environment (found by neither the group
 * nor the tool tag).
 */
export function noticeNoReaper(reason: string): void {
  if (noticed) return;
  noticed = true;
  process.stderr.write(
    `pi: commands run without a reaper: ${reason}; a process that leaves its group and clears its environment (env -i setsid) can outlive this agent; --sandbox on ends those too\n`,
  );
}
