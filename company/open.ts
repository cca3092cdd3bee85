import type { OpenBody } from './client/index.js';
import { type Command, optional, required, type Values } from './command.js';
import { CONNECTION_OPTIONS, CONNECTION_USAGE, companyClient } from './connection.js';
import { UsageError } from './key-file.js';
import { printJson } from './printing.js';

/**
 * `open`: opens one object of a granted key for a named employee (cloud/README.md, "Opening"). It always sends
 * an Idempotency-Key, so the client's retry after a lost answer gets the first outcome and never opens twice.
 */
export const open: Command = {
  name: 'open',
  summary: 'open a barrier the customer granted you, for a named employee',
  usage: `Usage: gatelink-company open --key-ref N --number-id N --actor NAME [--idempotency-key K] [--json]

Opens the object --number-id of the key --key-ref (both from status, once access is granted) and prints the
journal entry's id once the controller confirmed it. --actor names who opens (shown to the customer).
--idempotency-key makes a retry of the same call by you safe: it gets the first outcome, and never opens twice.
A refusal prints its code, sentence and request id, and exits with 1. --json prints the answer object only.

${CONNECTION_USAGE}`,
  options: {
    ...CONNECTION_OPTIONS,
    'key-ref': { type: 'string' },
    'number-id': { type: 'string' },
    actor: { type: 'string' },
    'idempotency-key': { type: 'string' },
    json: { type: 'boolean' },
  },
  async run(values, io, env) {
    const body = openBody(values);
    const client = companyClient(values, env);
    const idempotencyKey = optional(values, 'idempotency-key');
    const answer = await client.open(body, idempotencyKey ? { idempotencyKey } : {});
    if (values.json === true) printJson(io, answer);
    else io.out(`Opened: journal entry ${answer.id}.\n`);
    return 0;
  },
};

function openBody(values: Values): OpenBody {
  return {
    key_ref: wholeNumber(values, 'key-ref', 'the key_ref that status shows once access is granted'),
    number_id: wholeNumber(values, 'number-id', 'the number_id of the object to open, from status'),
    actor: required(values, 'actor', 'who opens, such as "Anna, van 7"'),
  };
}

function wholeNumber(values: Values, name: string, what: string): number {
  const text = required(values, name, what);
  if (!/^[1-9]\d{0,15}$/.test(text)) throw new UsageError(`--${name} ${text} is not a whole number`);
  return Number(text);
}
