/**
 * `Date.prototype.toISOString`, spelled from the date's UTC fields. V8's own (and
 * toUTCString, and JSON of a Date) starts its time-zone support on first use: ~0.9 MB
 * of ICU time-zone data and code paged into every worker, whose start-up needs only
 * today's date for the system prompt and a timestamp for a new session file.
 */

/** The same text as `d.toISOString()`; years outside 0–9999 and invalid dates go to it (it throws for the latter). */
export function isoTimestamp(d: Date): string {
  const year = d.getUTCFullYear();
  if (!(year >= 0 && year <= 9999)) return d.toISOString();
  return (
    `${pad(year, 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}` +
    `T${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}.${pad(d.getUTCMilliseconds(), 3)}Z`
  );
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, "0");
}
