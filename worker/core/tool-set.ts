/**
 * The tools of a session: which exist here (`--tools`, `--exclude-tools`, `--no-tools`,
 * the `defaultTools` setting), which are active now (built-ins by name, extension tools
 * switched by `setActiveTools` or by their registration), which a tool may call through
 * `executeTool`, and the set a resumed or navigated branch brings back.
 */
import type { AgentMessage } from "../../shared/schema/messages.js";
import type { ExtensionHooks } from "../extensions/hooks.js";
import { resolveDefaultTools } from "../tools/default-tools.js";
import { BUILT_IN_TOOLS, selectTools } from "../tools/index.js";
import type { AgentTool } from "../types.js";
import { restoredToolNames } from "./system-record.js";
import type { WorkerOptions } from "./worker-options.js";

/** What the tool set reads of its session. */
export interface ToolSetHost {
  extensions(): ExtensionHooks;
  /** The active tools changed: the system prompt follows. */
  changed(): void;
}

/** A session's tool set; built once from the flags and settings, then switched by name. */
export class ToolSet {
  /** The built-in tools active now, by name. */
  private activeBuiltIns: string[];
  /** Whether a tool exists here: `--tools LIST` and `--exclude-tools` leave the others out, as pi's registry does. */
  readonly registered: (name: string) => boolean;
  /** What `--tools` said of each extension tool. */
  private readonly wanted: (name: string) => boolean | undefined;
  /**
   * Extension tools switched on or off by `setActive`; the others are as `--tools` said,
   * else active unless registered inactive (`defaultActive: false`, deferred exposure).
   */
  private readonly extensionActive = new Map<string, boolean>();

  /** Throws what `--tools` parsing says of a bad list (mixed names and modifiers, patterns). */
  constructor(
    private readonly options: Pick<WorkerOptions, "tools" | "noTools" | "excludeTools">,
    defaultTools: string[] | undefined,
    private readonly host: ToolSetHost,
  ) {
    const tools = selectTools(
      options.tools,
      BUILT_IN_TOOLS.map((t) => t.name),
      options.noTools,
      options.excludeTools,
      defaultTools && resolveDefaultTools(defaultTools),
    );
    this.registered = tools.registered;
    this.wanted = tools.wanted;
    this.activeBuiltIns = tools.active;
  }

  /**
   * Tools the model may call now: the active built-ins, replaced or extended by extension
   * tools. As in pi 1.6 an extension's tool that overrides an active built-in takes its place
   * in the list; the others follow.
   */
  active(): AgentTool[] {
    const extra = this.host
      .extensions()
      .tools()
      .filter(
        (t) =>
          (this.extensionActive.get(t.name) ?? this.wanted(t.name) ?? t.defaultActive !== false) &&
          this.registered(t.name),
      );
    const builtIns = BUILT_IN_TOOLS.filter((t) => this.activeBuiltIns.includes(t.name) && this.registered(t.name)).map(
      (t) => extra.find((e) => e.name === t.name) ?? t,
    );
    return [...builtIns, ...extra.filter((e) => !builtIns.includes(e))];
  }

  /**
   * Tools a tool may call through `executeTool` (pi 1.6's callable tools, which codemode
   * scripts reach): the active ones but `model-only` ones (codemode, tool_search), and
   * every registered `deferred` one, active or not.
   */
  callable(): AgentTool[] {
    const active = this.active();
    const deferred = this.host
      .extensions()
      .tools()
      .filter((t) => t.exposure === "deferred" && this.registered(t.name) && !active.includes(t));
    return [...active, ...deferred].filter((t) => t.exposure !== "model-only");
  }

  /** Change the active set (built-in and extension tools by name); the host is told. */
  setActive(names: string[]): void {
    const builtIn = BUILT_IN_TOOLS.map((t) => t.name);
    this.activeBuiltIns = builtIn.filter((n) => names.includes(n));
    // A named tool not registered yet (an MCP server's, restored with its branch before the
    // server connected) is active once it registers; a later call's list keeps it so.
    for (const n of names) if (!builtIn.includes(n)) this.extensionActive.set(n, true);
    for (const t of this.host.extensions().tools()) this.extensionActive.set(t.name, names.includes(t.name));
    this.host.changed();
  }

  /**
   * pi 1.6: a resumed, switched or navigated branch brings back the tools its system messages
   * declare (with `--tools +x,-y` applied). Only when the tools were not given as a list:
   * an explicit `--tools a,b` or `--no-tools` wins, as in pi.
   */
  restoreFrom(transcript: readonly AgentMessage[]): void {
    const spec = (this.options.tools ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s.length > 0);
    const modifiers = spec.filter((s) => s.startsWith("+") || s.startsWith("-"));
    if (this.options.noTools || modifiers.length < spec.length) return;
    // Tools registered inactive (deferred ones, tool_search) come in only when the branch declared them.
    const names = restoredToolNames(
      transcript,
      this.host
        .extensions()
        .tools()
        .filter((t) => t.defaultActive !== false)
        .map((t) => t.name),
      modifiers,
    );
    if (names) this.setActive(names);
  }
}
