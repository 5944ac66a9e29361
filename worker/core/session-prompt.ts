/**
 * The system prompt of a session: built from the tools, the resources (SYSTEM.md,
 * APPEND_SYSTEM.md, skills), `--system-prompt` / `--append-system-prompt` and the context
 * files; declared to the context as pi 1.6's system messages; changed for one run by
 * `before_agent_start`; and the prompt a request carries, replayed from what the
 * conversation declared.
 */
import type { AgentMessage, ImageContent, SystemMessage } from "../../shared/schema/messages.js";
import type { ExtensionHooks, RunStart, SystemPromptOptions } from "../extensions/hooks.js";
import type { CustomMessageInput } from "../extensions/types.js";
import { getCurrentSystemPrompt } from "../providers/transcript.js";
import type { Resources } from "../resources/index.js";
import { userMessageText } from "../session/context.js";
import {
  buildSystemPromptSections,
  type ContextFile,
  findContextFiles,
  resolveAppend,
  systemPromptText,
} from "../system-prompt.js";
import type { AgentTool } from "../types.js";
import { type PromptSource, promptOptions, renderPromptOptions } from "./prompt-options.js";
import { systemUpdate } from "./system-record.js";
import type { WorkerOptions } from "./worker-options.js";

/** What the prompt is built from. */
export interface SessionPromptHost {
  readonly options: WorkerOptions;
  readonly cwd: string;
  readonly home: string;
  resources(): Resources;
  /** The tools active now. */
  tools(): AgentTool[];
}

/** A session's system prompt: the built one, and the one of the current run. */
export class SessionPrompt {
  private contextFiles: ContextFile[] = [];
  /** `--append-system-prompt` values with files read, once: the prompt is rebuilt whenever the tools change. */
  private appendTexts: string[] = [];
  /** The prompt's sections as pi 1.6 records them; the session's system messages declare them before a request. */
  private sections: Record<string, string> = {};
  /** The prompt built from the sections. */
  private built = "";
  /** The system prompt before_agent_start gave the last prompt's run (runs without a prompt keep it); null: the built one. */
  private runPrompt: string | null = null;

  constructor(private readonly host: SessionPromptHost) {}

  /** The built prompt (no run's `before_agent_start` change). */
  get text(): string {
    return this.built;
  }

  /** The context files (`AGENTS.md`, `CLAUDE.md`) the prompt holds. */
  get contextFilePaths(): string[] {
    return this.contextFiles.map((f) => f.path);
  }

  /** Context files and the appended text read (`--append-system-prompt` replaces APPEND_SYSTEM.md, as in pi). */
  readFiles(): void {
    const { options, cwd, home } = this.host;
    this.contextFiles = options.noContextFiles ? [] : findContextFiles(cwd, home);
    const appendFile = this.host.resources().systemFiles.append?.text;
    this.appendTexts = options.appendSystemPrompt?.length
      ? options.appendSystemPrompt.map((a) => resolveAppend(a, cwd))
      : appendFile
        ? [appendFile]
        : [];
  }

  /** Build the sections again from the current tools and resources. */
  rebuild(): void {
    const resources = this.host.resources();
    this.sections = buildSystemPromptSections({
      cwd: this.host.cwd,
      tools: this.host.tools(),
      systemPrompt: this.host.options.systemPrompt ?? resources.systemFiles.system?.text,
      append: this.appendTexts,
      contextFiles: this.contextFiles,
      skills: resources.skills,
    });
    this.built = systemPromptText(this.sections);
  }

  /** What the system prompt is built from (`before_agent_start` gets it in pi's options shape). */
  private source(): PromptSource {
    const resources = this.host.resources();
    const customPrompt = this.host.options.systemPrompt ?? resources.systemFiles.system?.text;
    return {
      cwd: this.host.cwd,
      tools: this.host.tools(),
      ...(customPrompt !== undefined ? { customPrompt } : {}),
      appendTexts: this.appendTexts,
      contextFiles: this.contextFiles,
      skills: resources.skills,
    };
  }

  /** What `context` has yet to be told of the prompt and tools (pi 1.6's system message), if anything. */
  declare(context: readonly AgentMessage[]): SystemMessage | undefined {
    return systemUpdate(context, this.sections, this.host.tools(), Date.now());
  }

  /**
   * The system prompt a request carries: the run's from `before_agent_start`, else the one
   * the conversation's system messages declare, replayed (pi 1.6 folds them into one leading
   * prompt for APIs without mid-conversation system messages, which is every API ours
   * speaks); the built one before any is recorded.
   */
  forRequest(messages: AgentMessage[]): string {
    if (this.runPrompt !== null) return this.runPrompt;
    const recorded = getCurrentSystemPrompt(messages as Parameters<typeof getCurrentSystemPrompt>[0]);
    return recorded || this.built;
  }

  /** The prompt of the run (`ctx.getSystemPrompt()`): before_agent_start's, else the built one. */
  forRun(): string {
    return this.runPrompt ?? this.built;
  }

  /**
   * pi's `before_agent_start` for the run of `prompts`: the handlers' system prompt becomes
   * the run's. As in pi 1.6 a prompt's run has it (`messageType: "user"`), and so has a run
   * an extension's custom message starts with `triggerTurn` while idle (`"custom"`); an
   * automatic retry (no such message) goes on with the system prompt the last such run had.
   * Returns the messages the handlers join to the prompt; undefined for a run that starts
   * with neither (it is no new run's start: the next-turn messages wait too).
   */
  async beforeAgentStart(
    extensions: ExtensionHooks,
    prompts: readonly AgentMessage[],
  ): Promise<CustomMessageInput[] | undefined> {
    const start = runStartOf(prompts);
    if (!start) return undefined;
    // The options are built only for a handler that can read them (every prompt passes here).
    const source = extensions.has("before_agent_start") ? this.source() : undefined;
    const prompt = source && {
      options: promptOptions(source),
      render: (o: SystemPromptOptions) => renderPromptOptions(source, o),
    };
    const outcome = await extensions.beforeAgentStart(start, this.built, prompt);
    this.runPrompt = outcome?.systemPrompt ?? null;
    return outcome?.messages ?? [];
  }
}

/** The `before_agent_start` event of a run's first messages; undefined for a run without a user or custom message. */
function runStartOf(prompts: readonly AgentMessage[]): RunStart | undefined {
  const first = prompts.find((p) => p.role === "user");
  if (first) {
    const text = prompts.map((p) => (p.role === "user" ? userMessageText(p) : "")).join("\n");
    const images = Array.isArray(first.content)
      ? first.content.filter((c): c is ImageContent => c.type === "image")
      : [];
    return { messageType: "user", prompt: text, ...(images.length > 0 ? { images } : {}) };
  }
  const custom = prompts.find((p) => p.role === "custom");
  return custom ? { messageType: "custom", message: custom } : undefined;
}
