/**
 * Agent names and ids: generated two-word names, short hex ids, and lookup of an
 * agent by its name or a unique prefix of its id.
 */
import { findAgentRef, nameProblem } from "../shared/agent-name.js";
import { randomBytes, randomInt } from "node:crypto";
import { OrchError } from "./errors.js";

const ADJECTIVES = [
  "amber",
  "brave",
  "calm",
  "clever",
  "crisp",
  "dapper",
  "eager",
  "fancy",
  "gentle",
  "happy",
  "jolly",
  "keen",
  "lively",
  "lucky",
  "merry",
  "nimble",
  "polite",
  "proud",
  "quick",
  "quiet",
  "rapid",
  "sharp",
  "shiny",
  "silent",
  "smart",
  "snappy",
  "steady",
  "sunny",
  "swift",
  "tidy",
  "vivid",
  "witty",
  "bold",
  "cosy",
  "daring",
  "fuzzy",
  "golden",
  "humble",
  "misty",
  "noble",
];
const NOUNS = [
  "otter",
  "falcon",
  "badger",
  "heron",
  "lynx",
  "panda",
  "raven",
  "tiger",
  "walrus",
  "yak",
  "beaver",
  "cobra",
  "dingo",
  "eagle",
  "ferret",
  "gecko",
  "ibis",
  "jackal",
  "koala",
  "lemur",
  "marmot",
  "newt",
  "ocelot",
  "puffin",
  "quail",
  "robin",
  "seal",
  "tapir",
  "urchin",
  "viper",
  "wombat",
  "zebra",
  "bison",
  "crane",
  "dolphin",
  "finch",
  "gopher",
  "hare",
  "moose",
  "owl",
];

/** Throws an `invalid` error naming the rule when `name` cannot be an agent name. */
export function assertValidName(name: string): void {
  const problem = nameProblem(name);
  if (problem) throw new OrchError("invalid", problem);
}

/** A fresh two-word name (`swift-otter`) not in `taken`; adds a number when the words run out. */
export function generateName(taken: ReadonlySet<string>, pick: (n: number) => number = randomInt): string {
  for (let attempt = 0; attempt < 50; attempt++) {
    const name = `${ADJECTIVES[pick(ADJECTIVES.length)]}-${NOUNS[pick(NOUNS.length)]}`;
    if (!taken.has(name)) return name;
  }
  const base = `${ADJECTIVES[pick(ADJECTIVES.length)]}-${NOUNS[pick(NOUNS.length)]}`;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

/** A new agent id: 12 hex digits, short enough to type a prefix of. */
export function generateId(): string {
  return randomBytes(6).toString("hex");
}

/**
 * Find the one agent `ref` means: an exact name, an exact id, else a unique id prefix.
 * Throws `not_found` or `ambiguous` with the candidates listed.
 */
export function resolveAgentRef<T extends { name: string; id: string }>(agents: Iterable<T>, ref: string): T {
  const found = findAgentRef(agents, ref);
  if ("problem" in found) throw new OrchError(found.code, found.problem);
  return found.agent;
}
