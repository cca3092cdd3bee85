import qrcode from 'qrcode-terminal';
import type { RequestAnswer, RequestBody } from './client/index.js';
import { type Command, optional, toolCommand } from './command.js';
import { CONNECTION_OPTIONS, CONNECTION_USAGE, companyClient } from './connection.js';
import { UsageError } from './key-file.js';
import { printJson } from './printing.js';

/**
 * `request`: a new access request (cloud/README.md, "Calls"), with its link printed as a QR code the customer can
 * scan from the screen (docs/design.md section 11.2), through the typed client.
 */
export const request: Command = {
  name: 'request',
  summary: 'ask a customer for access: prints the code, the link and its QR code',
  usage: `Usage: gatelink-company request [--ref REF] [--ttl-hours N] [--idempotency-key K] [--json]

Makes an access request and prints its code, the link to give the customer (also as a QR code) and when
the request expires. --ref is your own reference (1..64 printable characters); --ttl-hours how long the
customer has to answer (1..720, default 24). --json prints the answer object only.

${CONNECTION_USAGE}`,
  options: {
    ...CONNECTION_OPTIONS,
    ref: { type: 'string' },
    'ttl-hours': { type: 'string' },
    'idempotency-key': { type: 'string' },
    json: { type: 'boolean' },
  },
  async run(values, io, env) {
    const client = companyClient(values, env);
    const idempotencyKey = optional(values, 'idempotency-key');
    const answer = await client.request(requestBody(values), idempotencyKey ? { idempotencyKey } : {});
    if (values.json === true) printJson(io, answer);
    else io.out(requestText(answer, toolCommand(env)));
    return 0;
  },
};

function requestBody(values: Record<string, string | boolean | undefined>): RequestBody {
  const ref = optional(values, 'ref');
  const ttl = optional(values, 'ttl-hours');
  if (ttl !== undefined && !/^\d{1,4}$/.test(ttl)) {
    throw new UsageError(`--ttl-hours ${ttl} is not a whole number of hours (1..720)`);
  }
  return {
    ...(ref === undefined ? {} : { ref }),
    ...(ttl === undefined ? {} : { ttl_hours: Number(ttl) }),
  };
}

/**
 * The code, the link as a QR code and as text, and the expiry (UTC, as the API gives it); `tool` is how to run
 * the tool again (toolCommand).
 */
export function requestText(answer: RequestAnswer, tool: string): string {
  let qr = '';
  qrcode.generate(answer.url, { small: true }, (text) => {
    qr = text;
  });
  return `Request ${answer.code}, open until ${answer.expires_at} UTC (${answer.expires_in_hours} h).
Give the customer this link, or let them scan it:

${qr}
${answer.url}

Follow it with: ${tool} status ${answer.code}
`;
}
