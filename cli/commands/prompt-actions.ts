/**
 * What `prompt`, `steer`, `follow-up` and `abort` do (their flags and help are in
 * prompt.ts): send to agents, and with `--wait` follow the runs a prompt starts until
 * they settle.
 */
import { piOrchCommand } from "../../shared/cli-hint.js";
import type { IpcClient } from "../../ipc/client.js";
import type { IpcStreamMessage } from "../../shared/schema/ipc.js";
import { RUNNING_STATUSES } from "../../shared/schema/agent.js";
import {
  dialogQuestion,
  isDialogMethod,
  readPromptAnswer,
  type DialogMethod,
  type RpcAnswer,
  type RpcCommand,
} from "../../shared/schema/rpc.js";
import { CliError, type CliContext } from "../context.js";
import { keyAdvice } from "../key-advice.js";
import { TranscriptRenderer } from "./transcript.js";
import { EMPTY_RUN_VIEW, foldRun, learnSettles, textOf, type RunEvent, type RunView } from "../events/run-view.js";

/**
 * What to tell the user when `agent` opens a dialog (an extension's `ctx.ui.confirm`,
 * `select`, `input` or `editor`) while we wait for its answer to our command: the
 * question and how to answer it. Null for any other event. Pure.
 */
export function dialogHint(agent: string, event: Record<string, unknown>): string | null {
  if (event.type !== "extension_ui_request" || typeof event.id !== "string") return null;
  if (!isDialogMethod(event.method)) return null;
  const answers: Record<DialogMethod, Record<string, unknown>> = {
    confirm: { confirmed: true },
    select: {
      value: Array.isArray(event.options) && typeof event.options[0] === "string" ? event.options[0] : "OPTION",
    },
    input: { value: "TEXT" },
    editor: { value: "TEXT" },
  };
  const answer = answers[event.method];
  const question = dialogQuestion(event);
  const reply = JSON.stringify({ type: "extension_ui_response", id: event.id, ...answer });
  return `${agent} asks (${event.method}) ${JSON.stringify(question)} and waits for the answer; answer it in pi-orch tui, or with pi-orch rpc ${agent} '${reply}' ('{"type":"extension_ui_response","id":"${event.id}","cancelled":true}' dismisses it)`;
}

/** How one agent's run ended, for `--wait`. */
interface RunOutcome {
  agent: string;
  ok: boolean;
  /**
   * `stop`, `error`, `aborted`, ... of the last assistant message, why the run never
   * finished, `no_run` when the prompt started none (an extension command that only
   * showed or changed something), or `queued` when the worker queued it behind its run.
   */
  stopReason: string;
  error?: string;
  text: string;
}

/** Send one pi command to an agent; a refusal becomes a failure (exit 1) with the worker's reason. */
async function send<C extends RpcCommand>(
  client: IpcClient,
  agent: string,
  command: C,
  what: string,
  home: string,
): Promise<RpcAnswer<C["type"]>> {
  const response = await client.rpc(agent, command);
  if (!response.success) {
    const hint =
      command.type === "prompt" && /stream|busy|running/i.test(response.error ?? "")
        ? `; it is busy: use pi-orch steer ${agent} TEXT or pi-orch follow-up ${agent} TEXT`
        : "";
    const reason = keyAdvice(response.error ?? "no reason given", "daemon", home);
    throw new CliError(`agent "${agent}" refused the ${what}: ${hint ? reason.replace(/\.$/, "") : reason}${hint}`);
  }
  return response;
}

/**
 * Follows the runs started by our prompts until each settles: `agent_settled` (pi 1.x)
 * or the last `agent_end` no retry follows, the worker's answer saying the prompt was
 * handled (no run) or queued, or the worker going away (crash, stop, failure) mid-run.
 * A run's end is taken only once the prompt's answer is in: the answer says whether the
 * worker settles its runs, so an `agent_end` that overtook it may not be the end. Each
 * agent's stream is read through the one run view (cli/events/run-view.ts).
 */
export class RunWatcher {
  private readonly runs = new Map<
    string,
    { view: RunView; outcome: RunOutcome | null; seenSeq: number; noRunAt: number | null; answered: boolean }
  >();
  private resolveAll!: () => void;
  readonly settled: Promise<void>;

  constructor(agents: readonly string[]) {
    for (const agent of agents)
      this.runs.set(agent, { view: EMPTY_RUN_VIEW, outcome: null, seenSeq: -1, noRunAt: null, answered: false });
    this.settled = new Promise((r) => (this.resolveAll = r));
  }

  /** Our prompt to `agent` was refused: it settles now, as a failure. */
  refused(agent: string, error: string): void {
    this.finish(agent, { agent, ok: false, stopReason: "refused", error, text: "" });
  }

  /**
   * The worker answered our prompt. Queued, it settles now as `queued` (it runs after the
   * current run, which is not ours to wait for). Handled (no run going), the prompt is
   * done: a run the command started and finished meanwhile already settled it; otherwise
   * it settles as `no_run`, or failed if the command reported an extension error. On a
   * busy connection the answer may overtake the events before it, so with `upToSeq` (the
   * agent's last seq once the answer was in) it settles only when the stream got there.
   * Started, the run's end settles it (already seen, or still to come).
   */
  accepted(agent: string, response: RpcAnswer<"prompt">, upToSeq?: number): void {
    const run = this.runs.get(agent);
    if (!run || run.outcome) return;
    run.answered = true;
    const answer = readPromptAnswer(response);
    if (answer.settles) run.view = learnSettles(run.view);
    if (answer.disposition === "queued") return this.finish(agent, { agent, ok: true, stopReason: "queued", text: "" });
    if (answer.disposition === "handled") {
      run.noRunAt = upToSeq ?? -1;
      return this.settleNoRun(agent);
    }
    if (run.view.ending?.kind === "ended") this.finish(agent, lastOutcome(agent, run.view));
  }

  /** The subscription began after these seqs (`subscribe`'s `lastSeq`): the stream has them. */
  subscribedAt(lastSeq: Record<string, number>): void {
    for (const [agent, seq] of Object.entries(lastSeq)) {
      const run = this.runs.get(agent);
      if (run) run.seenSeq = Math.max(run.seenSeq, seq);
    }
  }

  feed(m: IpcStreamMessage): void {
    const run = this.runs.get(m.agent);
    if (!run || run.outcome) return;
    run.seenSeq = Math.max(run.seenSeq, m.type === "event" ? m.seq : m.to);
    if (m.type !== "event") return this.settleNoRun(m.agent);
    const before = run.view;
    run.view = foldRun(before, m.event as RunEvent);
    const ending = run.view.ending;
    if (ending === null || ending === before.ending) return this.settleNoRun(m.agent);
    const last = lastOutcome(m.agent, run.view);
    switch (ending.kind) {
      case "ended":
        // Before the answer it may be an agent_end of a worker that settles later (see accepted).
        if (run.answered) this.finish(m.agent, last);
        return;
      case "interrupted":
        this.finish(m.agent, {
          ...last,
          ok: false,
          stopReason: "interrupted",
          error: `the run was interrupted: ${ending.reason}`,
        });
        return;
      case "status":
        this.finish(m.agent, {
          ...last,
          ok: false,
          stopReason: ending.status,
          error: `the agent went ${ending.status}${ending.reason ? ` (${ending.reason})` : ""} before the run ended`,
        });
        return;
      case "exited":
        // The supervisor follows an exit with a status change (or a restart's run_interrupted).
        return;
    }
  }

  /** Outcomes so far; agents still running are reported as not settled. */
  outcomes(): RunOutcome[] {
    return [...this.runs].map(
      ([agent, r]) =>
        r.outcome ?? {
          ...lastOutcome(agent, r.view),
          ok: false,
          stopReason: "unsettled",
          error: "the run had not ended",
        },
    );
  }

  /** The connection ended: whatever still runs will not be seen to end. */
  disconnected(): void {
    for (const [agent, run] of this.runs) {
      if (!run.outcome)
        this.finish(agent, {
          ...lastOutcome(agent, run.view),
          ok: false,
          stopReason: "disconnected",
          error: "the supervisor went away before the run ended",
        });
    }
  }

  /** Settle an agent whose answer said no run, once its stream reached the answer's point. */
  private settleNoRun(agent: string): void {
    const run = this.runs.get(agent)!;
    if (run.outcome || run.noRunAt === null || run.seenSeq < run.noRunAt || run.view.inRun) return;
    if (run.view.started) return this.finish(agent, lastOutcome(agent, run.view));
    const error = run.view.extensionError;
    this.finish(agent, {
      agent,
      ok: error === null,
      stopReason: error === null ? "no_run" : "error",
      ...(error !== null ? { error: `the command failed: ${error}` } : {}),
      text: "",
    });
  }

  private finish(agent: string, outcome: RunOutcome): void {
    const run = this.runs.get(agent)!;
    if (run.outcome) return;
    run.outcome = outcome;
    if ([...this.runs.values()].every((r) => r.outcome)) this.resolveAll();
  }
}

/** The run's verdict so far: its last assistant message's, with the text of all of them. */
function lastOutcome(agent: string, view: RunView): RunOutcome {
  const replies = view.started ? view.messages.filter((m) => m.role === "assistant") : [];
  const last = replies.at(-1);
  if (!last) return { agent, ok: true, stopReason: "stop", text: "" };
  const stopReason = String(last.stopReason ?? "stop");
  return {
    agent,
    ok: stopReason !== "error" && stopReason !== "aborted",
    stopReason,
    error: last.errorMessage ?? (stopReason === "aborted" ? "the run was aborted" : undefined),
    text: replies
      .map((r) => textOf(r.content))
      .filter((t) => t !== "")
      .join("\n"),
  };
}

/** The agents a prompt goes to: one named, a `--to` list, or every running agent. */
async function targets(
  client: IpcClient,
  words: string[],
  opts: { to?: string[]; all?: boolean },
): Promise<{ agents: string[]; text: string }> {
  if (opts.to && opts.all) throw new CliError("give --to or --all, not both", 2);
  let refs: string[];
  let textWords: string[];
  if (opts.to || opts.all) {
    textWords = words;
    refs = opts.to ?? [];
  } else {
    if (words.length < 2)
      throw new CliError('give an agent and the text: pi-orch prompt NAME "TEXT" (or --to A,B / --all)', 2);
    refs = [words[0]];
    textWords = words.slice(1);
  }
  const text = textWords.join(" ");
  if (text.trim() === "") throw new CliError("the prompt text is empty", 2);
  if (opts.all) {
    const agents = (await client.list()).filter((a) => RUNNING_STATUSES.has(a.status));
    if (agents.length === 0) throw new CliError("no running agent to prompt; see pi-orch list");
    return { agents: agents.map((a) => a.name), text };
  }
  // Resolve ids and prefixes to names first, so an unknown agent fails before anything is sent.
  const infos = await Promise.all(refs.map((r) => client.status(r)));
  return { agents: [...new Set(infos.map((a) => a.name))], text };
}

/** `pi-orch prompt`: send the text to the agents; with `--wait`, follow their runs. */
export async function prompt(
  ctx: CliContext,
  words: string[],
  opts: { to?: string[]; all?: boolean; wait?: boolean; json?: boolean },
): Promise<number> {
  const client = await ctx.client();
  try {
    const { agents, text } = await targets(client, words, opts);
    if (!opts.wait) {
      // An extension command (`/cmd`) is answered when its handler ends, which may
      // wait on a dialog: say so, and how to answer it, instead of seeming to hang.
      await client.subscribe({ agents }, (m) => {
        const hint = m.type === "event" ? dialogHint(m.agent, m.event) : null;
        if (hint) ctx.err(`pi-orch: ${hint}`);
      });
      const results = await Promise.allSettled(
        agents.map((a) => send(client, a, { type: "prompt", message: text }, "prompt", ctx.home())),
      );
      const sent = results.map((r, i) => ({
        agent: agents[i]!,
        sent: r.status === "fulfilled",
        ...(r.status === "rejected" ? { error: (r.reason as Error).message } : {}),
      }));
      if (opts.json) ctx.json(sent);
      for (const s of sent) {
        if (s.error !== undefined) ctx.err(`pi-orch: ${s.error}`);
        else if (!opts.json) ctx.out(`prompt sent to ${s.agent}`);
      }
      return sent.every((s) => s.sent) ? 0 : 1;
    }
    return await promptAndWait(ctx, client, agents, text, Boolean(opts.json));
  } finally {
    await client.close();
  }
}

/** `pi-orch steer` and `follow-up`: queue a message for an agent's current run. */
export async function queueMessage(
  ctx: CliContext,
  agent: string,
  words: string[],
  type: "steer" | "follow_up",
  what: string,
): Promise<void> {
  const message = words.join(" ");
  if (message.trim() === "") throw new CliError(`the ${what} text is empty`, 2);
  const client = await ctx.client();
  try {
    const info = await client.status(agent);
    const name = info.name;
    // pi queues it and delivers it with the next prompt, which then answers both:
    // on an idle agent that is never what the user meant.
    if (info.status === "idle") {
      throw new CliError(
        `agent "${name}" is idle, so there is no run for the ${what}; queued, it would be mixed into the next prompt. Send it as a prompt instead: pi-orch prompt ${name} ${JSON.stringify(message)}`,
      );
    }
    await send(client, name, { type, message }, what, ctx.home());
    ctx.out(`${what} queued for ${name}`);
  } finally {
    await client.close();
  }
}

/** `pi-orch abort`: abort an agent's current run. */
export async function abort(ctx: CliContext, agent: string): Promise<number | void> {
  const client = await ctx.client();
  try {
    const info = await client.status(agent);
    const name = info.name;
    if (info.status === "idle") {
      ctx.out(`${name} is idle: no run to abort`);
      return 0;
    }
    await send(client, name, { type: "abort" }, "abort", ctx.home());
    ctx.out(`abort sent to ${name}`);
  } finally {
    await client.close();
  }
}

/**
 * Whether the answer to a `/command` prompt came from a worker that does not say whether
 * a run is going (pi's own): a command that started none leaves `--wait` waiting. Pure.
 */
export function silentOnRuns(text: string, response: RpcAnswer<"prompt">): boolean {
  const data = response.success ? response.data : undefined;
  return (
    text.trimStart().startsWith("/") &&
    response.success &&
    data?.running === undefined &&
    data?.disposition === undefined
  );
}

/** Subscribe, send the prompts, stream the replies, and report how each run ended. */
async function promptAndWait(
  ctx: CliContext,
  client: IpcClient,
  agents: string[],
  text: string,
  json: boolean,
): Promise<number> {
  const watcher = new RunWatcher(agents);
  const renderer = new TranscriptRenderer({
    write: (s) => ctx.write(s),
    colors: ctx.color,
    prefixAgents: agents.length > 1,
    verbose: false,
    // Skipped events leave a hole in the reply: say so where a person sees it, off stdout.
    notice: (line) => ctx.err(line),
  });
  const subscribed = await client.subscribe({ agents }, (m) => {
    if (!json) renderer.feed(m);
    watcher.feed(m);
    const hint = m.type === "event" ? dialogHint(m.agent, m.event) : null;
    if (hint) ctx.err(`pi-orch: ${hint}`);
  });
  watcher.subscribedAt(subscribed.lastSeq);
  void client.closed.then(() => watcher.disconnected());
  await Promise.all(
    agents.map((agent) =>
      send(client, agent, { type: "prompt", message: text }, "prompt", ctx.home()).then(
        (response) => {
          if (silentOnRuns(text, response)) {
            ctx.err(
              `pi-orch: ${agent}'s worker does not say whether ${JSON.stringify(text.trim())} started a run (pi's workers do not), so this waits for a run's end; if the command started none, Ctrl-C stops waiting (the agent is not affected)`,
            );
          }
          if (readPromptAnswer(response).disposition !== "handled") return watcher.accepted(agent, response);
          // Where the agent's stream was once the answer was in: the verdict waits for the events up to there.
          return client.status(agent).then(
            (info) => watcher.accepted(agent, response, info.lastSeq),
            () => watcher.accepted(agent, response),
          );
        },
        (err: Error) => watcher.refused(agent, err.message),
      ),
    ),
  );
  await watcher.settled;
  renderer.end();
  const outcomes = watcher.outcomes();
  if (json) ctx.json(outcomes);
  for (const o of outcomes) {
    if (o.ok && o.stopReason === "no_run" && !json)
      ctx.err(
        `pi-orch: ${o.agent} took the prompt without starting a run (an extension command or input handler handled it)`,
      );
    if (o.ok && o.stopReason === "queued" && !json)
      ctx.err(
        `pi-orch: ${o.agent} queued the prompt behind its current run; not waiting for it (see ${piOrchCommand(`attach ${o.agent}`, ctx.homeFlag())})`,
      );
    if (o.ok) continue;
    ctx.err(
      `pi-orch: ${o.stopReason === "refused" ? o.error : `agent "${o.agent}": ${o.error ?? `the run ended with ${o.stopReason}`}; see ${piOrchCommand(`logs ${o.agent}`, ctx.homeFlag())}`}`,
    );
  }
  return outcomes.every((o) => o.ok) ? 0 : 1;
}
