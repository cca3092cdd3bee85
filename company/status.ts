import type { StatusAnswer } from './client/index.js';
import { type Command, required } from './command.js';
import { CONNECTION_OPTIONS, CONNECTION_USAGE, companyClient } from './connection.js';
import { fieldLines, printJson } from './printing.js';

/** `status`: a request's state and the fields it has so far (cloud/README.md, "`status` fields"). */
export const status: Command = {
  name: 'status',
  summary: "a request's state, and the key and numbers once the customer granted access",
  usage: `Usage: gatelink-company status CODE [--json]

Prints the state of the request CODE (also --code CODE) and what it has so far: your reference, when the
customer claimed it, and once access is granted the key_ref and the numbers you may open. --json prints the
answer object only.

${CONNECTION_USAGE}`,
  options: { ...CONNECTION_OPTIONS, code: { type: 'string' }, json: { type: 'boolean' } },
  positional: 'code',
  async run(values, io, env) {
    const code = required(values, 'code', 'the request code, as `status CODE` or --code CODE');
    const answer = await companyClient(values, env).status(code);
    if (values.json === true) printJson(io, answer);
    else io.out(statusText(answer));
    return 0;
  },
};

/** What each state means for the company (cloud/README.md, "`status` fields"). */
const STATE_MEANING: Record<StatusAnswer['state'], string> = {
  new: 'the customer has not opened the link yet',
  claimed: 'the customer opened the link and has not granted access yet',
  issued: 'the customer granted access',
  revoked: 'the customer withdrew access',
  expired: 'the request lapsed before access was granted',
  declined: 'the customer declined the request',
};

export function statusText(answer: StatusAnswer): string {
  const utc = (stamp: string | undefined) => (stamp === undefined ? undefined : `${stamp} UTC`);
  const numbers = answer.numbers?.map((number) => `${number.number_id} (${number.label})`).join(', ');
  return `Request ${answer.code}: ${answer.state}, ${STATE_MEANING[answer.state]}.
${fieldLines([
  ['Reference', answer.ref],
  ['Request expires', utc(answer.expires_at)],
  ['Claimed', utc(answer.claimed_at)],
  ['Issued', utc(answer.issued_at)],
  ['key_ref', answer.key_ref],
  ['number_id', numbers === '' ? 'none' : numbers],
  ['Access ends', utc(answer.key_expires_at)],
  ['Revoked', utc(answer.revoked_at)],
  ['Declined', utc(answer.declined_at)],
])}`;
}
