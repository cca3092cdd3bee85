import {
  DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
  GatelinkClient,
  type VerifyKey,
  verifyWebhook,
  WebhookVerificationError,
} from './client/index.js';
import { type Command, type Environment, optional, required, type Values } from './command.js';
import { serviceUrl } from './connection.js';
import { UsageError } from './key-file.js';
import { printJson } from './printing.js';
import { readSavedDelivery } from './saved-delivery.js';

/**
 * `verify-webhook`: checks an event delivery saved to a file (company/saved-delivery.ts) with the client's own
 * verification, against the service's published key (cloud/README.md, "Verifying a delivery"; docs/design.md
 * section 11.2). Useful to tell whether a callback that refuses deliveries is wrong, or the delivery.
 */
export const verifyWebhookCommand: Command = {
  name: 'verify-webhook',
  summary: 'check that a saved event delivery was signed by the service',
  usage: `Usage: gatelink-company verify-webhook --file delivery [--key BASE64 | --url BASE_URL]
                                       [--now TIME] [--max-age SECONDS] [--json]

Checks the delivery saved in --file: JSON {"headers": {...}, "body": "<the body exactly as received>"}, or
the HTTP request as received (request line, headers, an empty line, the body), as \`nc -l 8080 > delivery\`
saves it. Prints "valid" with the event's type and id, or why it is not valid (exit 1).

The service's key is --key (the "key" of its /.well-known/service.json), or fetched from --url (or
GATELINK_URL). A delivery more than --max-age seconds (default ${DEFAULT_WEBHOOK_TOLERANCE_SECONDS}) from now is
refused, as your callback should refuse it; to check one saved earlier, give the time it arrived with --now
(Unix seconds, or ISO 8601 such as 2026-05-04T10:15:02Z). --json prints one JSON object only.`,
  options: {
    file: { type: 'string' },
    key: { type: 'string' },
    url: { type: 'string' },
    now: { type: 'string' },
    'max-age': { type: 'string' },
    json: { type: 'boolean' },
  },
  async run(values, io, env) {
    const delivery = readSavedDelivery(required(values, 'file', 'the file the delivery is saved in'));
    const now = checkTime(optional(values, 'now'));
    const toleranceSeconds = maxAge(optional(values, 'max-age'));
    const publicKey = await serviceKey(values, env);
    try {
      const event = verifyWebhook({ ...delivery, publicKey, now, toleranceSeconds });
      if (values.json === true) printJson(io, { valid: true, type: event.type, id: event.id, event });
      else io.out(`valid: ${event.type} event ${event.id}, of ${event.at} UTC\n`);
      return 0;
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      if (values.json === true) {
        printJson(io, { valid: false, error: error.reason, message: error.message, request_id: null });
      } else {
        io.out(`invalid: ${error.message}\n`);
        if (error.reason === 'too_old') io.out(`${OLD_DELIVERY_HINT}\n`);
      }
      return 1;
    }
  },
};

const OLD_DELIVERY_HINT =
  'For a delivery saved earlier, give the time it arrived: --now <its webhook-timestamp>.';

/** The key given with --key, or the one the service publishes at --url. */
async function serviceKey(values: Values, env: Environment): Promise<string | VerifyKey> {
  const key = optional(values, 'key');
  if (key !== undefined && optional(values, 'url') !== undefined) {
    throw new UsageError("give either --key (the service's key) or --url (to fetch it), not both");
  }
  if (key !== undefined) return key;
  const baseUrl = serviceUrl(values, env);
  // Fetching the published key sends no credentials: the client is made with none.
  return new GatelinkClient({ baseUrl }).webhookKey();
}

function checkTime(text: string | undefined): Date {
  if (text === undefined) return new Date();
  const date = /^\d{1,15}$/.test(text) ? new Date(Number(text) * 1000) : new Date(text);
  if (Number.isNaN(date.getTime())) {
    throw new UsageError(
      `--now ${text} is neither Unix seconds nor an ISO 8601 time such as 2026-05-04T10:15:02Z`,
    );
  }
  return date;
}

function maxAge(text: string | undefined): number {
  if (text === undefined) return DEFAULT_WEBHOOK_TOLERANCE_SECONDS;
  if (!/^\d{1,10}$/.test(text)) throw new UsageError(`--max-age ${text} is not a whole number of seconds`);
  return Number(text);
}
