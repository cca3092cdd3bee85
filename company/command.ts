import { parseArgs } from 'node:util';
import { UsageError } from './key-file.js';

/**
 * One subcommand of `gatelink-company` (docs/design.md section 11.2): its name, what it does, its usage text
 * and options, and what it does with them. main.ts dispatches to them; each lives in a file of its own.
 */
export interface ToolOutput {
  out(text: string): void;
  err(text: string): void;
}

/** The environment a command reads its settings from (process.env when run as a program). */
export type Environment = Readonly<Record<string, string | undefined>>;

export type Values = Record<string, string | boolean | undefined>;

export interface StringOption {
  type: 'string';
}
export interface BooleanOption {
  type: 'boolean';
}

export interface Command {
  name: string;
  summary: string;
  usage: string;
  options: Record<string, StringOption | BooleanOption>;
  /** The option a lone word on the command line stands for (`status CODE` is `status --code CODE`). */
  positional?: string;
  /** Resolves to the exit code; `stop` aborts a command that runs until stopped (`listen`, on Ctrl-C). */
  run(values: Values, io: ToolOutput, env: Environment, stop?: AbortSignal): Promise<number>;
}

/** The command's options, or a UsageError naming what is wrong with them. */
export function readOptions(command: Command, args: string[]): Values {
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({
      args,
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: command.positional !== undefined,
      strict: true,
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  const name = command.positional;
  if (name === undefined || positionals.length === 0) return values;
  if (positionals.length > 1) throw new UsageError(`one ${name} only, not "${positionals.join(' ')}"`);
  if (values[name] !== undefined) throw new UsageError(`give the ${name} once: as a word or with --${name}`);
  return { ...values, [name]: positionals[0] };
}

/** A string option that must be given. */
export function required(values: Values, name: string, what: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is missing: ${what}`);
  return value;
}

/**
 * How to run the tool again, as the person ran it: `npm run company --` inside this repository (npm names the
 * script it runs in `npm_lifecycle_event`), else the installed `gatelink-company`. A follow-up printed the other
 * way would be a command their shell does not have.
 */
export function toolCommand(env: Environment): string {
  return env.npm_lifecycle_event === 'company' ? 'npm run company --' : 'gatelink-company';
}

export function optional(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}
