import { afterEach, describe, expect, it, vi } from "vitest";
import { ftruncateSync, mkdtempSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LineFile, type LineFileIo, type Resumed, WRITE_RETRY_MS } from "../../shared/line-file.js";

const dirs: string[] = [];
afterEach(() => {
  vi.useRealTimers();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempPath(): string {
  const dir = mkdtempSync(join(tmpdir(), "po-line-"));
  dirs.push(dir);
  return join(dir, "file.jsonl");
}

function enospc(): NodeJS.ErrnoException {
  return Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
}

/**
 * A disk that can be filled: while `full`, a write takes at most `room` bytes (the
 * last free page) and then refuses with ENOSPC; `cutFails` makes the cut-back refuse too.
 */
function fillableDisk() {
  const disk = {
    full: false,
    room: 0,
    cutFails: false,
    io: {
      writeSync(fd: number, data: string | Uint8Array, offset = 0, length?: number): number {
        const buf = typeof data === "string" ? Buffer.from(data) : Buffer.from(data);
        const end = length === undefined ? buf.length : offset + length;
        const piece = buf.subarray(typeof data === "string" ? 0 : offset, end);
        if (!disk.full) return writeSync(fd, piece);
        if (disk.room === 0) throw enospc();
        const n = writeSync(fd, piece.subarray(0, Math.min(disk.room, piece.length)));
        disk.room -= n;
        return n;
      },
      ftruncateSync(fd: number, length: number): void {
        if (disk.cutFails) throw Object.assign(new Error("EIO: i/o error, ftruncate"), { code: "EIO" });
        ftruncateSync(fd, length);
      },
    } satisfies LineFileIo,
  };
  return disk;
}

/** Let the listeners run (they are told in a microtask, after the write that found out). */
const told = () => new Promise<void>((r) => queueMicrotask(r));

describe("LineFile", () => {
  it("cuts a torn last line on open, and keeps a whole one without its newline when asked", () => {
    const path = tempPath();
    writeFileSync(path, '{"a":1}\n{"b":2}\n{"torn');
    const file = new LineFile(path);
    expect(file.write('{"c":3}\n')).toBe(true);
    file.close();
    expect(readFileSync(path, "utf8")).toBe('{"a":1}\n{"b":2}\n{"c":3}\n');

    writeFileSync(path, '{"a":1}\n{"whole":true}');
    const keeping = new LineFile(path, { cutTornLine: false });
    keeping.open();
    keeping.close();
    expect(readFileSync(path, "utf8")).toBe('{"a":1}\n{"whole":true}');
  });

  it("cuts a partly refused write back to the last whole line, also when the cut itself fails once", async () => {
    const path = tempPath();
    const disk = fillableDisk();
    const file = new LineFile(path, { io: disk.io });
    file.write("one\n");
    disk.full = true;
    disk.room = 3;
    expect(file.write("two\n")).toBe(false);
    expect(readFileSync(path, "utf8")).toBe("one\n");

    disk.room = 2;
    disk.cutFails = true;
    expect(file.write("three\n")).toBe(false);
    // The backlog goes first: "two" is torn this time and stays until the disk lets it be cut.
    expect(readFileSync(path, "utf8")).toBe("one\ntw");
    disk.full = false;
    disk.cutFails = false;
    expect(file.write("four\n")).toBe(true);
    file.close();
    expect(readFileSync(path, "utf8")).toBe("one\ntwo\nthree\nfour\n");
    await told();
  });

  it("keeps refused lines in order, tells the refusal once and the recovery with what was written and dropped", async () => {
    const path = tempPath();
    const disk = fillableDisk();
    const refused: string[] = [];
    const resumed: Resumed[] = [];
    const left: [string | undefined, boolean][] = [];
    const file = new LineFile<string>(path, {
      io: disk.io,
      onRefused: (e) => refused.push(e.code ?? ""),
      onResumed: (r) => resumed.push(r),
      onLeft: (tag, written) => left.push([tag, written]),
    });
    disk.full = true;
    for (const n of [1, 2, 3])
      expect(file.write(`line ${n}\n`, () => [{ text: `line ${n}\n`, tag: `t${n}` }])).toBe(false);
    await told();
    expect(refused).toEqual(["ENOSPC"]);
    expect(file.pending).toEqual({ lines: 3, bytes: 21, dropped: 0 });
    expect(file.flush()).toBe(false);
    expect(readFileSync(path, "utf8")).toBe("");

    disk.full = false;
    expect(file.write("line 4\n")).toBe(true);
    await told();
    expect(readFileSync(path, "utf8")).toBe("line 1\nline 2\nline 3\nline 4\n");
    expect(left).toEqual([
      ["t1", true],
      ["t2", true],
      ["t3", true],
    ]);
    expect(resumed).toEqual([{ written: 3, droppedLines: 0 }]);
    expect(file.pending).toEqual({ lines: 0, bytes: 0, dropped: 0 });
    file.close();
  });

  it("drops the least important lines first when the backlog is over its bound, never the newest", async () => {
    const path = tempPath();
    const disk = fillableDisk();
    const left: [string | undefined, boolean][] = [];
    const resumed: Resumed[] = [];
    const file = new LineFile<string>(path, {
      io: disk.io,
      backlogBytes: 40,
      onLeft: (tag, written) => left.push([tag, written]),
      onResumed: (r) => resumed.push(r),
    });
    disk.full = true;
    const lines = [
      { text: "start...\n", priority: 2, tag: "start" },
      { text: "delta 1.\n", priority: 0, tag: "d1" },
      { text: "note....\n", priority: 1, tag: "note" },
      { text: "delta 2.\n", priority: 0, tag: "d2" },
      { text: "end.....\n", priority: 2, tag: "end" },
      { text: "delta 3.\n", priority: 0, tag: "d3" },
    ];
    // One write of all six lines, refused: kept line by line, 9 bytes each, at most 40 bytes.
    expect(file.write(lines.map((l) => l.text).join(""), () => lines)).toBe(false);
    expect(left).toEqual([
      ["d1", false],
      ["d2", false],
    ]);
    expect(file.pending).toEqual({ lines: 4, bytes: 36, dropped: 2 });
    // The last delta goes once it is no longer the newest line, then the ordinary line.
    expect(file.write("end 2...\n", () => [{ text: "end 2...\n", priority: 2, tag: "end2" }])).toBe(false);
    expect(left.slice(2)).toEqual([["d3", false]]);
    expect(file.write("end 3...\n", () => [{ text: "end 3...\n", priority: 2, tag: "end3" }])).toBe(false);
    expect(left.slice(3)).toEqual([["note", false]]);

    disk.full = false;
    expect(file.flush()).toBe(true);
    await told();
    expect(readFileSync(path, "utf8")).toBe("start...\nend.....\nend 2...\nend 3...\n");
    expect(resumed).toEqual([{ written: 4, droppedLines: 4 }]);
    file.close();
  });

  it("tries the backlog again every second without another write", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const path = tempPath();
    const disk = fillableDisk();
    const file = new LineFile(path, { io: disk.io });
    disk.full = true;
    file.write("kept\n");
    vi.advanceTimersByTime(WRITE_RETRY_MS);
    expect(file.pending.lines).toBe(1);
    disk.full = false;
    vi.advanceTimersByTime(WRITE_RETRY_MS);
    expect(file.pending.lines).toBe(0);
    expect(readFileSync(path, "utf8")).toBe("kept\n");
    expect(vi.getTimerCount()).toBe(0);
    file.close();
    await told();
  });

  it("close tries the backlog a last time and says how many lines were never written", async () => {
    const path = tempPath();
    const disk = fillableDisk();
    const file = new LineFile(path, { io: disk.io });
    file.write("on disk\n");
    disk.full = true;
    file.write("a\n");
    file.write("b\n");
    expect(file.close()).toBe(2);
    expect(readFileSync(path, "utf8")).toBe("on disk\n");

    const again = new LineFile(path, { io: disk.io });
    again.write("c\n");
    disk.full = false;
    expect(again.close()).toBe(0);
    expect(readFileSync(path, "utf8")).toBe("on disk\nc\n");
    await told();
  });

  it("rotates before a write that would take the file past its size", () => {
    const path = tempPath();
    const rotated: string[] = [];
    const file = new LineFile(path, {
      rotation: {
        maxBytes: 11,
        rotate: (p) => {
          rotated.push(readFileSync(p, "utf8"));
          rmSync(p);
        },
      },
    });
    for (const line of ["12345\n", "6789\n", "abc\n"]) file.write(line);
    file.close();
    expect(rotated).toEqual(["12345\n6789\n"]);
    expect(readFileSync(path, "utf8")).toBe("abc\n");
  });
});
