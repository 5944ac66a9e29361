/**
 * Every `pi-orch` command. Each module exports `register(program, ctx)`; add a new
 * command by adding its module here (one line).
 */
import type { Command } from "commander";
import type { CliContext } from "../context.js";

/** Registers one command (or a small group) on the program. */
export type RegisterCommand = (program: Command, ctx: CliContext) => void;

/** In the order `pi-orch --help` lists them. */
export const COMMANDS: RegisterCommand[] = [];
