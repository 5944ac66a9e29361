/**
 * The extensions' life in a session: installed once loaded (bound to the session's host,
 * their providers and tools applied), started at each session (`session_start`, then
 * `resources_discover`), and reloaded by pi's `ctx.reload()` with the settings, skills,
 * prompts and context files read again. AgentSession holds one and reads `current`.
 */
import { NO_EXTENSIONS, type ExtensionHooks } from "../extensions/hooks.js";
import type { Resources } from "../resources/index.js";
import type { SessionResources } from "./session-resources.js";
import { trustHint } from "./trust-hint.js";

type Settings = Resources["settings"];

/** What the lifecycle needs of the session. */
export interface ExtensionLifecycleHost {
  /** Bind the session's host (pi's `ExtensionAPI` and `ctx`) to newly loaded hooks. */
  bind(hooks: ExtensionHooks): void;
  /** The extensions' providers over models.json's. */
  applyProviders(): void;
  /** The tools the current branch declares, back (a resumed session's, once its extension tools exist). */
  restoreTools(): void;
  /** The system prompt built again (tools, skills or context files changed). */
  rebuildSystem(): void;
  /** The context files (`AGENTS.md`, ...) read again. */
  readSystemFiles(): void;
  /** Settings, skills and prompt templates, read again by a reload and extended by `resources_discover`. */
  readonly resources: SessionResources;
  /** The settings a reload found changed since the last read, applied to the running session. */
  applySettings(before: Settings, after: Settings): void;
  env: NodeJS.ProcessEnv;
  warn(message: string): void;
}

/** The loaded extensions of one session, and how they are installed, started and reloaded. */
export class ExtensionLifecycle {
  /** The installed hooks (none until a mode installed them). */
  current: ExtensionHooks = NO_EXTENSIONS;
  private loader?: () => Promise<ExtensionHooks>;

  constructor(private readonly host: ExtensionLifecycleHost) {}

  /** Install loaded extensions (after the session is built, so they can see it). */
  install(hooks: ExtensionHooks): void {
    const first = this.current === NO_EXTENSIONS;
    this.current = hooks;
    this.host.bind(hooks);
    this.host.applyProviders();
    // The resumed session's loadout, now with the extensions' tools (a reload keeps the current one).
    if (first) this.host.restoreTools();
    this.host.rebuildSystem();
  }

  /** How `reload` loads the extensions again (the mode that loaded them sets it). */
  setLoader(load: () => Promise<ExtensionHooks>): void {
    this.loader = load;
  }

  /**
   * pi's `ctx.reload()`: `session_shutdown` (reason `reload`), then settings, skills,
   * prompt templates, context files and the extensions read again (flag values kept),
   * then `session_start` (reason `reload`).
   */
  async reload(): Promise<void> {
    await this.current.sessionShutdown("reload");
    const before = this.host.resources.current.settings;
    this.host.resources.reread();
    this.host.applySettings(before, this.host.resources.current.settings);
    this.host.readSystemFiles();
    if (this.loader) {
      const flags = new Map(this.current.flags().map((f) => [f.name, f.value]));
      const hooks = await this.loader();
      for (const flag of hooks.flags()) if (flags.get(flag.name) !== undefined) flag.value = flags.get(flag.name);
      this.install(hooks);
    } else {
      this.host.rebuildSystem();
    }
    await this.startSession("reload");
  }

  /** Announce the first session (after the mode is ready to carry the extensions' UI). */
  async start(): Promise<void> {
    for (const path of this.current.skipped()) {
      this.host.warn(`skipped the project extension ${path}: the project is not trusted (${trustHint(this.host.env)})`);
    }
    await this.startSession("startup");
  }

  /**
   * `session_start`, then `resources_discover`: skills and prompt templates at the paths
   * the extensions returned join the session's (as pi's `extendResources`), and the
   * system prompt is rebuilt with them.
   */
  async startSession(reason: "startup" | "new" | "resume" | "fork" | "reload", previousSessionFile?: string) {
    const found = await this.current.sessionStart(reason, previousSessionFile);
    if (this.host.resources.discover(found)) this.host.rebuildSystem();
  }
}
