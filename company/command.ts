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
  /** Resolves to the exit code. */
  run(values: Values, io: ToolOutput): Promise<number>;
}

/** The command's options, or a UsageError naming what is wrong with them. */
export function readOptions(command: Command, args: string[]): Values {
  try {
    const { values } = parseArgs({
      args,
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: false,
      strict: true,
    });
    return values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** A string option that must be given. */
export function required(values: Values, name: string, what: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is missing: ${what}`);
  return value;
}

export function optional(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}
