/**
 * The extension module cache (worker/extensions/module-import.ts) through the built `pi`:
 * a start writes it, the next runs the extensions from it without loading jiti and they
 * behave as under jiti; a changed file, an import that is gone or now names another file,
 * and a cache file cut short or damaged all send the extension through jiti again. Each
 * start reports hits and misses on stderr (`PI_ORCH_CODE_CACHE=report`).
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join, resolve } from "node:path";
import { createJiti } from "jiti";
import { afterEach, describe, expect, it } from "vitest";
import { killAllWorkers, RpcWorker, tempDir } from "../support/rpc-worker.js";
import { TEN_EXAMPLES } from "../support/upstream-pi16.js";

const DIST = resolve(import.meta.dirname, "../../dist/cli");
const EXAMPLES = resolve(
  import.meta.dirname,
  "../upstream/node_modules/@earendil-works/pi-coding-agent/examples/extensions",
);

const dirs: { cleanup: () => void }[] = [];
afterEach(async () => {
  await killAllWorkers();
  for (const d of dirs.splice(0)) d.cleanup();
});

function temp(): string {
  const d = tempDir("pi-ext-cache-");
  dirs.push(d);
  return d.path;
}

/** An extension of two files in pi's examples' style: `./helper.js` names helper.ts. */
function twoFiles(root: string, label = "made here"): string {
  const ext = join(root, "two-files");
  mkdirSync(ext, { recursive: true });
  writeFileSync(join(ext, "helper.ts"), `export const label = (): string => ${JSON.stringify(label)};\n`);
  writeFileSync(
    join(ext, "index.ts"),
    [
      'import { Type } from "typebox";',
      'import { label } from "./helper.js";',
      "export default function (pi: any): void {",
      '  pi.registerCommand("two-files", { description: `${label()} ${import.meta.url.endsWith("index.ts")} ${Type.Number().type}`, handler: async () => {} });',
      '  pi.on("session_start", (_e: unknown, ctx: any) => ctx.ui.setStatus("two-files", label()));',
      "}",
      "",
    ].join("\n"),
  );
  return ext;
}

interface Start {
  commands: { name: string; description?: string }[];
  /** What the extensions asked of the UI at start (status, notices, widgets), without the requests' ids. */
  ui: unknown[];
  errors: string[];
  stderr: string;
}

/** Start the built worker with `paths`, read its commands, tools and load errors, close it (it writes the cache as it exits). */
async function start(root: string, paths: string[], env: NodeJS.ProcessEnv = {}): Promise<Start> {
  const worker = new RpcWorker(
    ["--mode", "rpc", "--provider", "faux", "--no-session", ...paths.flatMap((p) => ["-e", p])],
    {
      cwd: root,
      env: { PI_ORCH_HOME: root, PI_ORCH_CODE_CACHE: "report", PI_ORCH_CACHE_DIR: join(root, "cache"), ...env },
      bin: [process.execPath, join(DIST, "pi.cjs")],
    },
  );
  const commands = await worker.request({ type: "get_commands" });
  worker.closeStdin();
  const exit = await worker.exited;
  expect(exit.code).toBe(0);
  return {
    commands: commands.data.commands,
    ui: worker.received.filter((l) => l.type === "extension_ui_request").map(({ id: _id, ...rest }) => rest),
    errors: worker.received.filter((l) => l.type === "extension_error").map((l) => `${l.extensionPath}: ${l.error}`),
    stderr: worker.stderr.join(""),
  };
}

/** A start with the cache off, then one that writes the cache and one that runs from it: [off, hit]. */
async function offAndHit(root: string, paths: string[]): Promise<[Start, Start]> {
  const off = await start(root, paths, { PI_ORCH_EXTENSION_CACHE: "off" });
  await start(root, paths);
  const hit = await start(root, paths);
  expect(hit.stderr).toContain("extension module cache hit");
  return [off, hit];
}

const described = (s: Start, name: string) => s.commands.find((c) => c.name === name)?.description;

describe("the extension module cache", () => {
  it("runs extensions from the cache at the next start, without jiti, as jiti ran them", async () => {
    const root = temp();
    const ext = twoFiles(root);
    const first = await start(root, [ext]);
    expect(first.stderr).toContain(`pi: extension module cache miss for ${join(ext, "index.ts")}`);
    expect(first.stderr).toContain("pi: extension module cache written to");
    const second = await start(root, [ext]);
    expect(second.stderr).toContain(`pi: extension module cache hit for ${join(ext, "index.ts")}`);
    expect(second.stderr).not.toContain("jiti code cache");
    const off = await start(root, [ext], { PI_ORCH_EXTENSION_CACHE: "off" });
    expect(off.stderr).not.toContain("extension module cache");
    expect(described(second, "two-files")).toBe("made here true number");
    expect(second.commands).toEqual(off.commands);
    expect(second.ui).toEqual(off.ui);
    expect(second.ui).toContainEqual(expect.objectContaining({ method: "setStatus", statusText: "made here" }));
  });

  it("gives node's built-ins from the cache as jiti gives them, without loading jiti", async () => {
    const root = temp();
    const ext = join(root, "builtins.ts");
    writeFileSync(
      ext,
      [
        'import * as path from "node:path";',
        'import fs, { readFileSync } from "fs";',
        'import { EventEmitter } from "node:events";',
        "export default async function (pi: any): Promise<void> {",
        '  const os = await import("node:os");',
        '  const facts = [Object.keys(path).includes("default"), typeof path.join, fs === (path as any).default, typeof readFileSync, typeof EventEmitter, typeof os.cpus, typeof (os as any).default?.cpus, String((path as any)[Symbol.toStringTag])];',
        '  pi.registerCommand("builtins", { description: JSON.stringify(facts), handler: async () => {} });',
        "}",
        "",
      ].join("\n"),
    );
    const [off, hit] = await offAndHit(root, [ext]);
    expect(hit.stderr).not.toContain("jiti code cache");
    expect(hit.commands).toEqual(off.commands);
    expect(described(hit, "builtins")).toContain('"function"');
  });

  it("leaves what the cache does not serve (a JSON file, require) to jiti, which loads it as before", async () => {
    const root = temp();
    const ext = join(root, "mixed");
    mkdirSync(ext);
    writeFileSync(join(ext, "data.json"), '{ "word": "json" }\n');
    writeFileSync(
      join(ext, "index.ts"),
      [
        'import { join } from "node:path";',
        'import data from "./data.json";',
        "export default function (pi: any): void {",
        '  const os = require("node:os");',
        '  pi.registerCommand("mixed", { description: `${join("a", "b")} ${data.word} ${typeof os.cpus}`, handler: async () => {} });',
        "}",
        "",
      ].join("\n"),
    );
    const [off, hit] = await offAndHit(root, [ext]);
    expect(hit.stderr).toContain("jiti code cache");
    expect(described(hit, "mixed")).toBe(`${join("a", "b")} json function`);
    expect(hit.commands).toEqual(off.commands);
  });

  it("picks up an edited file at the next start", async () => {
    const root = temp();
    const ext = twoFiles(root);
    await start(root, [ext]);
    expect((await start(root, [ext])).stderr).toContain("cache hit");
    twoFiles(root, "edited");
    const edited = await start(root, [ext]);
    expect(edited.stderr).toContain("cache miss");
    expect(described(edited, "two-files")).toMatch(/^edited /);
    expect(described(await start(root, [ext]), "two-files")).toMatch(/^edited /);
  });

  it("reports an import that is gone as jiti does, and follows one that now names another file", async () => {
    const root = temp();
    const ext = twoFiles(root);
    await start(root, [ext]);
    // Renamed away: the import now fails, with jiti's own error.
    renameSync(join(ext, "helper.ts"), join(ext, "helper-old.ts"));
    const gone = await start(root, [ext]);
    const goneOff = await start(root, [ext], { PI_ORCH_EXTENSION_CACHE: "off" });
    expect(gone.stderr).toContain("cache miss");
    expect(gone.errors).toHaveLength(1);
    expect(gone.errors).toEqual(goneOff.errors);
    expect(described(gone, "two-files")).toBeUndefined();
    // Back, and then a helper.js beside it, which `./helper.js` names first.
    renameSync(join(ext, "helper-old.ts"), join(ext, "helper.ts"));
    await start(root, [ext]);
    expect((await start(root, [ext])).stderr).toContain("cache hit");
    writeFileSync(join(ext, "helper.js"), 'exports.label = () => "from helper.js";\n');
    const shadowed = await start(root, [ext]);
    expect(shadowed.stderr).toContain("cache miss");
    expect(described(shadowed, "two-files")).toMatch(/^from helper\.js /);
  });

  it("loads an extension given as a link with jiti each time, so a link pointed elsewhere is followed", async () => {
    const root = temp();
    const one = (name: string) => {
      const file = join(root, `${name}.ts`);
      writeFileSync(
        file,
        `export default (pi: any) => pi.registerCommand("two-files", { description: "from ${name}", handler: async () => {} });\n`,
      );
      return file;
    };
    const a = one("a");
    const b = one("b");
    const link = join(root, "ext.ts");
    symlinkSync(a, link);
    await start(root, [link]);
    const again = await start(root, [link]);
    expect(again.stderr).toContain("cache miss");
    expect(described(again, "two-files")).toBe("from a");
    rmSync(link);
    symlinkSync(b, link);
    expect(described(await start(root, [link]), "two-files")).toBe("from b");
  });

  it("loads with jiti when a cache file is cut short or has a byte changed, and writes it again", async () => {
    const root = temp();
    const ext = twoFiles(root);
    const first = await start(root, [ext]);
    const cacheDir = join(root, "cache");
    const [file] = readdirSync(cacheDir).filter((f) => f.startsWith("pi-extension-"));
    const path = join(cacheDir, file!);
    const whole = readFileSync(path);
    for (const damaged of [
      whole.subarray(0, Math.floor(whole.length * 0.6)),
      Buffer.concat([whole.subarray(0, whole.length - 200), Buffer.from("x"), whole.subarray(whole.length - 199)]),
      Buffer.from("garbage"),
    ]) {
      writeFileSync(path, damaged);
      const s = await start(root, [ext]);
      expect(s.stderr).toContain("cache miss");
      expect(s.commands).toEqual(first.commands);
      expect((await start(root, [ext])).stderr).toContain("cache hit");
    }
  });

  it("keeps its files private to the user, and loads as before where it cannot write them", async () => {
    const root = temp();
    const ext = twoFiles(root);
    await start(root, [ext]);
    const cacheDir = join(root, "cache");
    expect(statSync(cacheDir).mode & 0o777).toBe(0o700);
    for (const f of readdirSync(cacheDir)) expect(statSync(join(cacheDir, f)).mode & 0o077).toBe(0);
    // A cache folder that cannot be made (a file is in the way), as a read-only home is for any user.
    const blocker = join(root, "not-a-folder");
    writeFileSync(blocker, "");
    const unwritable = await start(root, [ext], { PI_ORCH_CACHE_DIR: join(blocker, "cache") });
    expect(unwritable.stderr).toContain("could not write the extension module cache");
    expect(described(unwritable, "two-files")).toMatch(/^made here /);
  });

  it.skipIf(!statSync(EXAMPLES, { throwIfNoEntry: false }))(
    "runs ten of pi's examples from the cache with the commands and start-up UI jiti gave them",
    async () => {
      const root = temp();
      const ten = TEN_EXAMPLES.map((e) => join(EXAMPLES, e));
      const off = await start(root, ten, { PI_ORCH_EXTENSION_CACHE: "off" });
      await start(root, ten);
      const hit = await start(root, ten);
      expect(hit.stderr, hit.stderr).not.toContain("cache miss");
      expect(hit.stderr.match(/extension module cache hit/g)).toHaveLength(10);
      expect(hit.stderr).not.toContain("jiti code cache");
      expect(hit.commands).toEqual(off.commands);
      expect(hit.ui).toEqual(off.ui);
      expect(hit.errors).toEqual([]);
    },
  );

  it("keeps jiti's transform cache in the private cache folder: one planted in $TMPDIR/jiti never runs", async () => {
    const root = temp();
    const ext = join(root, "plain.ts");
    writeFileSync(
      ext,
      'export default function (pi: any): void {\n  pi.registerCommand("plain", { description: "the real one", handler: async () => {} });\n}\n',
    );
    // What jiti writes for this file (its name, and the last line that names jiti's version and
    // the source's hash), made by jiti with the worker's options, with one line put first.
    const made = join(root, "made");
    await createJiti(import.meta.url, { moduleCache: false, fsCache: made }).import(ext, { default: true });
    const [name] = readdirSync(made);
    const marker = join(root, "planted-ran");
    const tmp = join(root, "tmp");
    mkdirSync(join(tmp, "jiti"), { recursive: true });
    chmodSync(join(tmp, "jiti"), 0o777);
    writeFileSync(
      join(tmp, "jiti", name!),
      `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "ran");\n${readFileSync(join(made, name!), "utf8")}`,
    );
    // The planted file is a hit for jiti where it looks by default ($TMPDIR/jiti).
    await createJiti(import.meta.url, { moduleCache: false, fsCache: join(tmp, "jiti") }).import(ext, {
      default: true,
    });
    expect(existsSync(marker)).toBe(true);
    rmSync(marker);

    const first = await start(root, [ext], { TMPDIR: tmp });
    expect(described(first, "plain")).toBe("the real one");
    expect(existsSync(marker)).toBe(false);
    const own = join(root, "cache", "jiti");
    expect(statSync(own).mode & 0o777).toBe(0o700);
    expect(readdirSync(own)).toEqual([name]);
    // A user's JITI_FS_CACHE is jiti's to read, as before.
    const off = await start(root, [ext], { TMPDIR: tmp, JITI_FS_CACHE: "true" });
    expect(described(off, "plain")).toBe("the real one");
    expect(existsSync(marker)).toBe(true);
  });
});
