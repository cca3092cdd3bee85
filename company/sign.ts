import { ACTIONS } from '../shared/company-api/calls.js';
import { signRequest } from '../shared/crypto/request-signing.js';
import { type Command, optional, type ToolOutput } from './command.js';
import { type CompanyKey, readKeyFile, UsageError } from './key-file.js';
import { printJson } from './printing.js';

/**
 * `sign`: one signed call to the company API (docs/design.md section 2), signed by the service's own rule
 * (shared/crypto/request-signing.ts): sent, with the answer printed, or printed as a curl command to run.
 */
export const sign: Command = {
  name: 'sign',
  summary: 'sign one API call, and send it or print it as a curl command',
  usage: `Usage: gatelink-company sign [--key company-key.json] --url BASE_URL --action request|status|open
                             [--body '{"ref":"ORD-1"}'] [--code CODE] [--print] [--json]

Signs one call to BASE_URL/api/company.php?a=<action> with the key file's key, for its domain, and sends it,
printing the answer. --code CODE adds "code" to the body (for status). --print prints a curl command instead
of sending it; it is good for 300 s and once. BASE_URL may also come from GATELINK_URL. --json prints the
answer object only (a refusal as {"error", "message", "request_id"}), or with --print the call's url, headers,
body and curl command.`,
  options: {
    key: { type: 'string' },
    url: { type: 'string' },
    action: { type: 'string' },
    body: { type: 'string' },
    code: { type: 'string' },
    print: { type: 'boolean' },
    json: { type: 'boolean' },
  },
  async run(values, io) {
    const company = readKeyFile(optional(values, 'key') ?? 'company-key.json');
    const call = signedCall(company, {
      url: optional(values, 'url') ?? process.env.GATELINK_URL,
      action: optional(values, 'action'),
      body: optional(values, 'body'),
      code: optional(values, 'code'),
    });
    const json = values.json === true;
    if (values.print === true) {
      if (json) printJson(io, { ...call, curl: curlCommand(call) });
      else io.out(`${curlCommand(call)}\n`);
      io.err('This command is good for 300 s, and once: the nonce is single use.\n');
      return 0;
    }
    return send(call, io, json);
  },
};

export interface SignedCall {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** The call's address, headers and body, signed now with a fresh nonce. */
export function signedCall(
  company: CompanyKey,
  input: {
    url: string | undefined;
    action: string | undefined;
    body: string | undefined;
    code?: string | undefined;
  },
  now = Date.now(),
): SignedCall {
  const url = callUrl(input.url, input.action);
  const body = callBody(input.body, input.code);
  const signed = signRequest(company.key, { domain: company.domain, body, ts: Math.floor(now / 1000) });
  return { url, headers: { 'Content-Type': 'application/json', ...signed }, body };
}

function callUrl(base: string | undefined, action: string | undefined): string {
  if (!base) throw new UsageError('--url is missing: the service address, such as https://gate.example.com');
  const parsed = URL.parse(base);
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) {
    throw new UsageError(`--url ${base} is not an http or https address`);
  }
  if (!action) throw new UsageError(`--action is missing: one of ${ACTIONS.join(', ')}`);
  if (!(ACTIONS as readonly string[]).includes(action)) {
    throw new UsageError(`--action ${action} is not one of ${ACTIONS.join(', ')}`);
  }
  const root = parsed.href
    .replace(/\/api\/company\.php.*$/, '')
    .replace(/[?#].*$/, '')
    .replace(/\/+$/, '');
  return `${root}/api/company.php?a=${action}`;
}

/** The body as given (its exact bytes are signed), or with "code" added; it must be a JSON object. */
function callBody(text: string | undefined, code: string | undefined): string {
  const given = text ?? '{}';
  let parsed: unknown;
  try {
    parsed = JSON.parse(given);
  } catch {
    throw new UsageError(`--body is not JSON: ${given}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new UsageError('--body must be a JSON object, such as {"ref":"ORD-1"}');
  }
  return code === undefined ? given : JSON.stringify({ ...parsed, code });
}

async function send(call: SignedCall, io: ToolOutput, json: boolean): Promise<number> {
  let response: Response;
  try {
    response = await fetch(call.url, {
      method: 'POST',
      headers: call.headers,
      body: call.body,
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    const cause = (error as { cause?: { message?: string } }).cause?.message;
    throw new Error(`could not reach ${call.url}: ${cause ?? (error as Error).message}`);
  }
  const text = await response.text();
  if (json) printJson(io, jsonAnswer(response, text));
  else io.out(`HTTP ${response.status}\n${pretty(text)}\n`);
  return response.ok ? 0 : 1;
}

/** The answer object, or a refusal in the tool's JSON error shape (docs/design.md section 11.2). */
function jsonAnswer(response: Response, text: string): unknown {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    answer = undefined;
  }
  if (response.ok && answer !== undefined) return answer;
  const refusal = (answer ?? {}) as { error?: unknown; message?: unknown };
  return {
    ...(typeof answer === 'object' ? answer : {}),
    error: typeof refusal.error === 'string' ? refusal.error : 'unexpected_answer',
    message:
      typeof refusal.message === 'string'
        ? refusal.message
        : `HTTP ${response.status}: ${text.slice(0, 200)}`,
    request_id: response.headers.get('x-request-id'),
  };
}

function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** The same call as a curl command, every value quoted for a POSIX shell. */
export function curlCommand(call: SignedCall): string {
  const headers = Object.entries(call.headers).map(([name, value]) => `  -H ${quote(`${name}: ${value}`)}`);
  return [`curl -sS -X POST ${quote(call.url)}`, ...headers, `  --data-raw ${quote(call.body)}`].join(
    ' \\\n',
  );
}

function quote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
