/**
 * The options a worker starts with, as the command line gives them (cli/pi.ts parses them):
 * one type the session layer and its parts read.
 */
import type { ThinkingLevel } from "../../shared/schema/messages.js";
import type { NoTools } from "../tools/index.js";

/** Everything a worker is started with (from the command line). */
export interface WorkerOptions {
  cwd: string;
  home?: string;
  provider?: string;
  model?: string;
  thinking?: ThinkingLevel;
  apiKey?: string;
  /** `--tools`: an allow-list of names and `*` patterns, or `+name`/`-name` changes to the default set. */
  tools?: string;
  /** `--no-tools` (`all`) or `--no-builtin-tools` (`builtin`). */
  noTools?: NoTools;
  /** `--exclude-tools`: names or `*` patterns of tools left out, whoever asks (built-in and extension tools). */
  excludeTools?: string[];
  systemPrompt?: string;
  appendSystemPrompt?: string[];
  noContextFiles?: boolean;
  fauxScript?: string;
  /** First automatic-retry delay (doubles each attempt; default 2000). */
  retryDelayMs?: number;
  /** `--session FILE|ID-PREFIX`; a path to a file that does not exist yet starts a new session there. */
  session?: string;
  /** `--fork FILE|ID-PREFIX`: a new session holding a copy of that one. */
  forkFrom?: string;
  /** `--models`: patterns (globs on `provider/id` or `id`, `:level` ignored) limiting `cycle_model`. */
  scopedModels?: string[];
  /**
   * `--session-id`: that session of this cwd's session folder, created with that id when
   * there is none; with `forkFrom` the fork's id, with `noSession` the in-memory session's.
   */
  sessionId?: string;
  /** `--continue`: the latest session of this cwd. */
  continueSession?: boolean;
  sessionDir?: string;
  noSession?: boolean;
  /** Compaction: tokens kept free below the context window, and recent tokens kept verbatim. */
  compactionReserveTokens?: number;
  compactionKeepTokens?: number;
  /** `--bash-inherit-keys`: tool commands see the provider API keys (removed by default). */
  bashInheritKeys?: boolean;
  /** The project is trusted: its `.pi/` settings, skills, prompts and SYSTEM.md load. */
  trusted?: boolean;
  /** `--no-skills` / `--skill PATH`. */
  noSkills?: boolean;
  skillPaths?: string[];
  /** `--no-prompt-templates` / `--prompt-template PATH`. */
  noPromptTemplates?: boolean;
  promptTemplatePaths?: string[];
  env?: NodeJS.ProcessEnv;
  /** Warnings for a human (stderr in the CLI). */
  warn?: (message: string) => void;
  /**
   * Extensions load after construction and may register the provider `--provider` /
   * settings name: a model that cannot be resolved yet waits for `settleStartModel()`
   * instead of failing the constructor (pi resolves the model after extensions load).
   */
  deferModel?: boolean;
}
