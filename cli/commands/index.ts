/**
 * Every `pi-orch` command. Each module exports `register(program, ctx)`; add a new
 * command by adding its module here (one line).
 */
import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { register as spawn } from "./spawn.js";
import { register as list } from "./list.js";
import { register as status } from "./status.js";
import { register as stop } from "./stop.js";
import { register as restart } from "./restart.js";
import { register as rm } from "./rm.js";
import { register as prompt } from "./prompt.js";
import { register as attach } from "./attach.js";
import { register as logs } from "./logs.js";
import { register as rpc } from "./rpc.js";
import { register as diff } from "./diff.js";
import { register as worktrees } from "./worktrees.js";
import { register as run } from "./run.js";
import { register as report } from "./report.js";
import { register as tui } from "./tui.js";
import { register as demo } from "./demo.js";
import { register as serve } from "./serve.js";
import { register as shutdown } from "./shutdown.js";

/** Registers one command (or a small group) on the program. */
export type RegisterCommand = (program: Command, ctx: CliContext) => void;

/** In the order `pi-orch --help` lists them. */
export const COMMANDS: RegisterCommand[] = [
  spawn,
  list,
  status,
  stop,
  restart,
  rm,
  prompt,
  attach,
  logs,
  rpc,
  diff,
  worktrees,
  run,
  report,
  tui,
  demo,
  serve,
  shutdown,
];
