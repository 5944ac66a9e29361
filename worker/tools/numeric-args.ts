/**
 * The numeric arguments of the built-in tools as pi 1.6 reads them. Its schemas take any
 * number (`Type.Number`, no minimum), so a model's `limit: 0` or `offset: 1.5` runs; the
 * tools then make a count of it, and these functions do that the same way.
 */

/** A result count (`limit` of grep, find, ls): whole, at least 1, `fallback` when absent. */
export function countLimit(limit: number | undefined, fallback: number): number {
  return Math.max(1, Math.floor(limit ?? fallback));
}

/** grep's `context`: whole lines, 0 when absent or not positive (never exponent notation for rg). */
export function contextLines(context: number | undefined): number {
  return context && context > 0 ? Math.min(Math.floor(context), Number.MAX_SAFE_INTEGER) : 0;
}

/**
 * read's first line, 0-based, from its 1-based `offset`: 0 when absent, 0 or below; a
 * fraction stays (pi's arithmetic: the line shown is its whole part, the notices say
 * `offset - 1` plus what follows).
 */
export function startLine(offset: number | undefined): number {
  return offset ? Math.max(0, offset - 1) : 0;
}
