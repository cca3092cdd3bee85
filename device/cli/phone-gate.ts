import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { objectConfigSchema } from '../config.js';
import { cliError } from './cli-error.js';

/**
 * The gate a phone controller calls (docs/design.md section 9.3), for `provision --phone`: its number and a
 * name, given as options or asked at the terminal, each checked by the config's own rules for a `phone` object
 * and asked again until it holds. The config written holds that object and the phone's own clock (Android keeps
 * it from the network, and a phone has no systemd to ask).
 */
export interface PhoneGate {
  number: string;
  label: string;
}

/** The object's local id: a phone controller calls one gate. */
export const PHONE_OBJECT_ID = 'gate';

/** The installer's part of a phone controller's config, as an objects file would hold it. */
export function phoneSettings(gate: PhoneGate): Record<string, unknown> {
  return { objects: [phoneObject(gate)], clock: { check: 'none' } };
}

/** The object, its number as people write it (+49 170 123-4567) reduced to what is dialled. */
function phoneObject(gate: PhoneGate) {
  return {
    id: PHONE_OBJECT_ID,
    label: gate.label,
    kind: 'phone',
    number: gate.number.replace(/[\s()./-]/g, ''),
  };
}

/** What is wrong with one answer, in the config's words, or null. */
function problemWith(gate: PhoneGate, field: keyof PhoneGate): string | null {
  const parsed = objectConfigSchema.safeParse(phoneObject(gate));
  if (parsed.success) return null;
  return parsed.error.issues.find((issue) => issue.path[0] === field)?.message ?? null;
}

const QUESTIONS: readonly (readonly [keyof PhoneGate, string])[] = [
  ['number', "The gate's phone number, its GSM module's (e.g. +491701234567): "],
  ['label', 'A name for the gate (e.g. Gate, Garage, Mill Lane 4): '],
];

/**
 * Asks for what the options did not give, on `io.input` (the terminal: the install script is read by sh from a
 * pipe, so it gives this its /dev/tty), until each answer holds; an option that does not hold is refused.
 */
export async function askPhoneGate(
  given: Partial<PhoneGate>,
  io: { input: Readable; output: Writable },
): Promise<PhoneGate> {
  const gate: PhoneGate = { number: given.number ?? '', label: given.label ?? '' };
  for (const [field] of QUESTIONS) {
    const problem = given[field] === undefined ? null : problemWith(gate, field);
    if (problem !== null) throw cliError('phone_gate_invalid', { option: `--${field}`, problem });
  }
  const asked = QUESTIONS.filter(([field]) => given[field] === undefined);
  if (asked.length > 0) {
    // Lines are read in turn, whether typed one by one or pasted together before the first question.
    const lines = createInterface({ input: io.input, terminal: false });
    const answers = lines[Symbol.asyncIterator]();
    try {
      for (const [field, question] of asked) {
        for (;;) {
          io.output.write(question);
          const answer = await answers.next();
          if (answer.done) throw cliError('phone_gate_unanswered');
          gate[field] = answer.value.trim();
          const problem = problemWith(gate, field);
          if (problem === null) break;
          io.output.write(`  ${problem}\n`);
        }
      }
    } finally {
      lines.close();
    }
  }
  return { label: gate.label, number: phoneObject(gate).number };
}
