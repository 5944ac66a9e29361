/**
 * JUnit XML for CI test tabs: one `<testcase>` per task. A failed or timed-out task
 * carries a `<failure>` with the reason as its message and the last assistant text
 * (and the check's output) as its body. A cancelled task (Ctrl-C, --fail-fast) or one
 * never started is an `<error>`, not `<skipped>`: the run did not pass, and a CI system
 * that reads only the XML must mark the job red. Tokens and cost go in `<properties>` of
 * each testcase and, summed, of the suite. Pure.
 */
import type { RunReport, TaskResult } from "./types.js";

// XML 1.0 allows tab, LF, CR and code points from U+0020 on, minus surrogates and U+FFFE/U+FFFF.
// eslint-disable-next-line no-control-regex
const INVALID_XML =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Escape text for an XML attribute or element; characters XML cannot hold become U+FFFD. */
export function escapeXml(text: string): string {
  return text
    .replace(INVALID_XML, "\uFFFD")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

function failureBody(r: TaskResult): string {
  const parts = [`reason: ${r.reason ?? r.status}`];
  if (r.finalText) parts.push(`last assistant text:\n${r.finalText}`);
  if (r.check && !r.check.passed && r.check.output) parts.push(`check output (${r.check.command}):\n${r.check.output}`);
  return parts.join("\n\n");
}

/** `<properties>` with the tokens and cost (dollars), for CI systems that chart testcase properties. */
function properties(indent: string, t: { input: number; output: number; total: number; cost?: number }): string {
  const p = (name: string, value: number) => `${indent}  <property name="${name}" value="${value}"/>\n`;
  return `${indent}<properties>\n${p("tokens.input", t.input)}${p("tokens.output", t.output)}${p("tokens.total", t.total)}${p("cost", t.cost ?? 0)}${indent}</properties>\n`;
}

function testcase(r: TaskResult, suite: string): string {
  const open = `    <testcase name="${escapeXml(r.name)}" classname="${escapeXml(suite)}" time="${seconds(r.durationMs)}"`;
  const out = `${properties("      ", r.tokens)}${r.finalText ? `      <system-out>${escapeXml(r.finalText)}</system-out>\n` : ""}`;
  switch (r.status) {
    case "passed":
      return `${open}>\n${out}    </testcase>`;
    case "failed":
    case "timed_out": {
      const type = r.status === "timed_out" ? "timeout" : r.check && !r.check.passed ? "check" : "agent";
      return `${open}>\n      <failure message="${escapeXml(r.reason ?? r.status)}" type="${type}">${escapeXml(failureBody(r))}</failure>\n${out}    </testcase>`;
    }
    case "cancelled":
    case "skipped": {
      const type = r.status === "cancelled" ? "cancelled" : "not_run";
      return `${open}>\n      <error message="${escapeXml(r.reason ?? r.status)}" type="${type}">${escapeXml(failureBody(r))}</error>\n${out}    </testcase>`;
    }
  }
}

/** The whole document for a report. */
export function junitXml(report: RunReport, suite = "pi-orch run"): string {
  const name = report.shard ? `${suite} (shard ${report.shard.index}/${report.shard.total})` : suite;
  const failures = report.counts.failed + report.counts.timed_out;
  const errors = report.counts.cancelled + report.counts.skipped;
  const attrs = `name="${escapeXml(name)}" tests="${report.counts.total}" failures="${failures}" errors="${errors}" skipped="0" time="${seconds(report.durationMs)}" timestamp="${escapeXml(report.startedAt)}"`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites ${attrs}>`,
    `  <testsuite ${attrs}>`,
    properties(
      "    ",
      report.tasks.reduce(
        (a, r) => ({
          input: a.input + r.tokens.input,
          output: a.output + r.tokens.output,
          total: a.total + r.tokens.total,
          cost: a.cost + (r.tokens.cost ?? 0),
        }),
        { input: 0, output: 0, total: 0, cost: 0 },
      ),
    ).trimEnd(),
    ...report.tasks.map((r) => testcase(r, name)),
    "  </testsuite>",
    "</testsuites>",
    "",
  ].join("\n");
}
