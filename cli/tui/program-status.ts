/**
 * The fleet's state for the terminal: OSC 7501 program status
 * (https://www.superlogical.com/rex/docs/build/program-status), as pi 1.6 reports its
 * own, so a terminal or an agent dashboard shows whether pi-orch's agents work, wait for
 * you, are done or failed. Sent only once the terminal answers the protocol's query
 * (before its answer to the device-attributes query that follows it), or always with
 * `PI_PROGRAM_STATUS=1`; never with `PI_PROGRAM_STATUS=0`. tmux and screen do not pass
 * the query on, so behind them nothing is sent.
 */
import {
  fleetProgramStatus,
  formatProgramStatus,
  isProgramStatusReply,
  PROGRAM_STATUS_QUERY,
  type ProgramStatus,
} from "../../shared/activity.js";
import { TerminalReplies } from "./keys.js";
import { agentActivity, visibleAgents, type TuiState } from "./state.js";

/** Primary device attributes: every terminal answers it, so its answer ends the wait for ours. */
const DEVICE_ATTRIBUTES_QUERY = "\x1b[c";
/** A terminal that answers neither query within this long is taken as one without support. */
const QUERY_WAIT_MS = 2_000;

/** What the reporter needs of the store. */
interface StateSource {
  getState(): TuiState;
  subscribe(listener: () => void): () => void;
}

/** Reports the store's agents as one program status while the TUI runs. */
export class ProgramStatusReporter {
  /** The key reader hands terminal replies here instead of treating them as keys. */
  readonly replies: TerminalReplies;
  private supported: boolean;
  private last = "";
  private lastAgents: TuiState["agents"] | null = null;
  private readonly unsubscribe: () => void;
  private queryTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: StateSource,
    private readonly write: (text: string) => void,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    const override = env.PI_PROGRAM_STATUS;
    this.supported = override === "1";
    this.replies = new TerminalReplies((reply) => this.onReply(reply));
    this.unsubscribe = store.subscribe(() => this.report());
    if (override !== "1" && override !== "0") {
      this.replies.expecting = true;
      this.write(PROGRAM_STATUS_QUERY + DEVICE_ATTRIBUTES_QUERY);
      this.queryTimer = setTimeout(() => {
        this.replies.expecting = false;
      }, QUERY_WAIT_MS);
      this.queryTimer.unref();
    }
    this.report();
  }

  /** The status the fleet reports now. */
  current(): ProgramStatus {
    const state = this.store.getState();
    return fleetProgramStatus(visibleAgents(state).map((a) => ({ name: a.name, activity: agentActivity(a) })));
  }

  /** Clear our status (the TUI quits) and stop listening. */
  dispose(): void {
    this.unsubscribe();
    if (this.queryTimer) clearTimeout(this.queryTimer);
    this.replies.expecting = false;
    if (this.supported && this.last) this.write(formatProgramStatus({ state: "clear" }));
    this.supported = false;
  }

  private onReply(reply: string): void {
    if (isProgramStatusReply(reply)) {
      this.supported = true;
      this.last = "";
      this.lastAgents = null;
      this.report();
    } else if (/^\x1b\[\?[\d;]*c$/.test(reply)) {
      // The device attributes came: a terminal that supports program status answered before them.
      this.replies.expecting = false;
      if (this.queryTimer) clearTimeout(this.queryTimer);
    }
  }

  private report(): void {
    if (!this.supported) return;
    const agents = this.store.getState().agents;
    if (agents === this.lastAgents) return;
    this.lastAgents = agents;
    const text = formatProgramStatus(this.current());
    if (text === this.last) return;
    this.last = text;
    this.write(text);
  }
}
