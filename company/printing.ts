import type { ToolOutput } from './command.js';

/** What `--json` prints: one JSON document on stdout, and nothing else (docs/design.md section 11.2). */
export function printJson(io: ToolOutput, value: unknown): void {
  io.out(`${JSON.stringify(value, null, 2)}\n`);
}

/** Label and value lines, the labels padded to one column; lines without a value are left out. */
export function fieldLines(fields: [label: string, value: string | number | undefined][]): string {
  const present = fields.filter((field): field is [string, string | number] => field[1] !== undefined);
  const width = Math.max(...present.map(([label]) => label.length)) + 2;
  return present.map(([label, value]) => `${`${label}:`.padEnd(width)}${value}\n`).join('');
}
