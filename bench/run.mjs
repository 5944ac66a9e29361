// `npm run bench`: runs every benchmark section side by side in one process run and
// writes BENCHMARKS.md. Sections are TypeScript modules (loaded with jiti) that
// export `run(): Promise<string>` returning markdown. Pass section names to run a
// subset: `npm run bench -- startup`; `longday` (10 minutes) runs only when named.
import { createJiti } from "jiti";
import { writeFileSync, existsSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";

const SECTIONS = [
  ["startup", "./startup.ts"],
  ["cli-startup", "./cli-startup.ts"],
  ["edit-grep", "./edit-grep.ts"],
  ["supervisor", "./supervisor.ts"],
  ["fleet", "./fleet.ts"],
  ["run", "./fanout.ts"],
  ["queue", "./queue.ts"],
  ["tui", "./tui.ts"],
  ["sandbox", "./sandbox.ts"],
  ["prefix", "./prefix.ts"],
];
// Sections that run only when named (they take minutes): `npm run bench -- longday`.
const ON_REQUEST = [["longday", "./longday.ts"]];

// This environment's NODE_EXTRA_CA_CERTS costs every node start 50–85 ms of certificate
// parsing; benches measure without it (the start-up section adds it back for its own rows).
if (process.env.NODE_EXTRA_CA_CERTS !== undefined) {
  process.env.BENCH_NODE_EXTRA_CA_CERTS = process.env.NODE_EXTRA_CA_CERTS;
  delete process.env.NODE_EXTRA_CA_CERTS;
}
const wanted = process.argv.slice(2);
const jiti = createJiti(import.meta.url);
const out = [];
out.push("# Benchmarks");
out.push("");
out.push("Produced by `npm run bench` (medians of repeated runs, measured side by side in one run).");
out.push("");
out.push(
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}.`,
);
out.push("");
const loadAtStart = loadavg()[0];
const header = out.length;
const ran = [];
for (const [name, file] of [...SECTIONS, ...ON_REQUEST]) {
  if (wanted.length > 0 ? !wanted.includes(name) : ON_REQUEST.some(([n]) => n === name)) continue;
  if (!existsSync(new URL(file, import.meta.url))) continue;
  process.stderr.write(`bench: ${name}…\n`);
  const mod = await jiti.import(new URL(file, import.meta.url).href);
  const started = Date.now();
  const section = await mod.run();
  process.stderr.write(`bench: ${name} done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  out.push(section.trim());
  out.push("");
  ran.push(name);
}
// The machine may be shared: say how busy it was, next to each section's own "other CPU" figures.
out.splice(
  header,
  0,
  `Load average (1 min) at the start / end of the run: ${loadAtStart.toFixed(1)} / ${loadavg()[0].toFixed(1)} on ${cpus().length} cores.`,
  "",
);
const text = out.join("\n");
console.log(text);
if (wanted.length === 0) {
  writeFileSync(new URL("../BENCHMARKS.md", import.meta.url), text);
  process.stderr.write("bench: wrote BENCHMARKS.md\n");
} else if (existsSync(new URL("../BENCHMARKS.md", import.meta.url))) {
  process.stderr.write(
    `bench: ran ${ran.join(", ")} only; BENCHMARKS.md left as it was (run without arguments to rewrite it)\n`,
  );
}
