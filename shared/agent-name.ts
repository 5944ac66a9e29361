/**
 * The rule for agent names, shared by the supervisor (which refuses a bad one) and the
 * TUI's new-agent form (which says so before it sends), and which agent a name or id
 * prefix means (the supervisor, and `logs` without one). Names become file names under
 * logs/, so they keep to a safe ASCII alphabet. Pure.
 */

/** 1-64 ASCII letters, digits, ".", "_" or "-", starting with a letter or digit. */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** What is wrong with `name` as an agent name, or null when nothing is. */
export function nameProblem(name: string): string | null {
  if (NAME_PATTERN.test(name)) return null;
  return `invalid agent name "${name}": use 1-64 ASCII letters (a-z, A-Z), digits, ".", "_" or "-", starting with a letter or digit`;
}

/**
 * The one agent `ref` means: an exact name, an exact id, else a unique id prefix; or why
 * none (`not_found`, or `ambiguous` with the candidates listed). Pure.
 */
export function findAgentRef<T extends { name: string; id: string }>(
  agents: Iterable<T>,
  ref: string,
): { agent: T } | { problem: string; code: "not_found" | "ambiguous" } {
  const all = [...agents];
  const exact = all.find((a) => a.name === ref) ?? all.find((a) => a.id === ref);
  if (exact) return { agent: exact };
  const byPrefix = ref.length > 0 ? all.filter((a) => a.id.startsWith(ref)) : [];
  if (byPrefix.length === 1) return { agent: byPrefix[0]! };
  if (byPrefix.length > 1) {
    const names = byPrefix.map((a) => `${a.name} (${a.id})`).join(", ");
    return {
      code: "ambiguous",
      problem: `"${ref}" matches ${byPrefix.length} agents: ${names}; use more of the id or the name`,
    };
  }
  return { code: "not_found", problem: `no agent named "${ref}" or with an id starting with it; see pi-orch list` };
}
