/**
 * The rule for agent names, shared by the supervisor (which refuses a bad one) and the
 * TUI's new-agent form (which says so before it sends). Names become file names under
 * logs/, so they keep to a safe ASCII alphabet. Pure.
 */

/** 1-64 ASCII letters, digits, ".", "_" or "-", starting with a letter or digit. */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** What is wrong with `name` as an agent name, or null when nothing is. */
export function nameProblem(name: string): string | null {
  if (NAME_PATTERN.test(name)) return null;
  return `invalid agent name "${name}": use 1-64 ASCII letters (a-z, A-Z), digits, ".", "_" or "-", starting with a letter or digit`;
}
