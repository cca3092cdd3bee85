import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';

/**
 * `gatelink-admin`: the operators' command line. It speaks only to the operator API under /ops/ (the
 * database may be an embedded one that a single process owns), with `--url` and `--token` or the same
 * from the environment.
 */
const USAGE = `Usage: gatelink-admin [--url URL] [--token TOKEN] [--json] <command>

Commands:
  company add --name NAME [--domain DOMAIN] [--email EMAIL]
  company list
  company approve ID         a domain company: fetch, show and pin its key
  company suspend ID
  company secret ID          issue a secret (shown once; the previous one works 24 h more)
  company confirm-key ID     pin the key now published on the company's domain
  device add --label LABEL   a device id and a one-time provisioning code (24 h)
  device list
  customer add --name NAME [--email EMAIL]
  journal [--device ID] [--company ID] [--limit N]

Connection: --url, else GATELINK_URL, else http://localhost:8080.
Token: --token, else OPERATOR_TOKEN, else the file <GATELINK_DATA_DIR or ./.data>/operator-token.`;

class UsageError extends Error {}

interface Options {
  url: string;
  token: string;
  json: boolean;
}

const answerSchema = z.record(z.string(), z.unknown());

async function call(options: Options, method: 'GET' | 'POST', path: string, body?: unknown) {
  let response: Response;
  try {
    response = await fetch(new URL(path, options.url), {
      method,
      headers: {
        authorization: `Bearer ${options.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch {
    throw new Error(`cannot reach the cloud at ${options.url}: is it running (npm start, or npm run cloud)?`);
  }
  const answer = answerSchema.parse(await response.json().catch(() => ({})));
  if (!response.ok) {
    const code = typeof answer.error === 'string' ? answer.error : `HTTP ${response.status}`;
    throw new Error(
      `${code}: ${typeof answer.message === 'string' ? answer.message : 'the cloud refused the call'}`,
    );
  }
  return answer;
}

function positiveId(text: string | undefined, what: string): number {
  const id = Number(text);
  if (!Number.isSafeInteger(id) || id < 1)
    throw new UsageError(`${what} needs a numeric id, such as: ${what} 3`);
  return id;
}

function required(value: string | undefined, flag: string, command: string): string {
  if (!value) throw new UsageError(`${command} needs ${flag}`);
  return value;
}

type Row = Record<string, unknown>;

function table(rows: Row[], columns: string[]): string {
  if (rows.length === 0) return '(none)';
  const cells = rows.map((row) => columns.map((column) => formatCell(row[column])));
  const widths = columns.map((column, i) => Math.max(column.length, ...cells.map((line) => line[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((value, i) => value.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(columns), ...cells.map(line)].join('\n');
}

function formatCell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

async function run(argv: string[]): Promise<string> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      url: { type: 'string' },
      token: { type: 'string' },
      json: { type: 'boolean', default: false },
      name: { type: 'string' },
      domain: { type: 'string' },
      email: { type: 'string' },
      label: { type: 'string' },
      device: { type: 'string' },
      company: { type: 'string' },
      limit: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help || positionals.length === 0) return USAGE;
  const options: Options = {
    url: values.url ?? process.env.GATELINK_URL ?? 'http://localhost:8080',
    token: '',
    json: values.json,
  };
  options.token = values.token ?? process.env.OPERATOR_TOKEN ?? readTokenFile();
  const [noun, verb, arg] = positionals;
  const show = (answer: Row, text: () => string) => (options.json ? JSON.stringify(answer, null, 2) : text());
  const command = `${noun} ${verb ?? ''}`.trim();

  switch (command) {
    case 'company add': {
      const answer = await call(options, 'POST', '/ops/companies', {
        name: required(values.name, '--name', command),
        ...(values.domain ? { domain: values.domain } : {}),
        ...(values.email ? { contact_email: values.email } : {}),
      });
      const company = answer.company as Row;
      return show(answer, () =>
        [
          `Company ${company.id} "${company.name}" added (pending).`,
          company.domain
            ? `Next: gatelink-admin company approve ${company.id}  (fetches and pins the key at https://${company.domain}/.well-known/service.json)`
            : `Next: gatelink-admin company approve ${company.id}, then gatelink-admin company secret ${company.id}`,
        ].join('\n'),
      );
    }
    case 'company list': {
      const answer = await call(options, 'GET', '/ops/companies');
      return show(answer, () =>
        table(answer.companies as Row[], [
          'id',
          'name',
          'domain_display',
          'status',
          'key_confirmed_at',
          'key_check_error',
        ]),
      );
    }
    case 'company approve':
    case 'company confirm-key': {
      const id = positiveId(arg, command);
      const path = verb === 'approve' ? 'approve' : 'confirm-key';
      const answer = await call(options, 'POST', `/ops/companies/${id}/${path}`);
      const company = answer.company as Row;
      return show(answer, () =>
        company.key
          ? [
              `Company ${id} "${company.name}" approved with the key from ${company.domain_display}:`,
              `  key          ${company.key}`,
              `  fingerprint  ${answer.fingerprint}`,
              'The key is pinned: a different key on the domain is refused until its rotation is confirmed.',
            ].join('\n')
          : `Company ${id} "${company.name}" approved. Issue its secret with: gatelink-admin company secret ${id}`,
      );
    }
    case 'company suspend': {
      const id = positiveId(arg, command);
      const answer = await call(options, 'POST', `/ops/companies/${id}/suspend`);
      return show(answer, () => `Company ${id} suspended: its calls now answer 403 org_not_approved.`);
    }
    case 'company secret': {
      const id = positiveId(arg, command);
      const answer = await call(options, 'POST', `/ops/companies/${id}/secret`);
      return show(answer, () =>
        [
          `org_id  ${answer.org_id}`,
          `secret  ${answer.secret}`,
          'Shown once: hand it to the company now; only its hash is kept.',
          answer.previous_valid_until
            ? `The previous secret keeps working until ${answer.previous_valid_until}.`
            : '',
        ]
          .filter(Boolean)
          .join('\n'),
      );
    }
    case 'device add': {
      const answer = await call(options, 'POST', '/ops/devices', {
        label: required(values.label, '--label', command),
      });
      const device = answer.device as Row;
      return show(answer, () =>
        [
          `Device ${device.device_id} "${device.label}" created.`,
          `Provisioning code: ${device.provisioning_code}  (single use, valid until ${device.expires_at})`,
          `On the controller: gatelink-device provision --cloud ${options.url} --code ${device.provisioning_code}`,
        ].join('\n'),
      );
    }
    case 'device list': {
      const answer = await call(options, 'GET', '/ops/devices');
      return show(answer, () =>
        table(answer.devices as Row[], ['id', 'label', 'provisioned', 'online', 'customer_id', 'version']),
      );
    }
    case 'customer add': {
      const answer = await call(options, 'POST', '/ops/customers', {
        display_name: required(values.name, '--name', command),
        ...(values.email ? { email: values.email } : {}),
      });
      const customer = answer.customer as Row;
      return show(answer, () => `Customer ${customer.id} "${customer.display_name}" added.`);
    }
    default: {
      if (noun === 'journal') {
        const query = new URLSearchParams();
        if (values.device) query.set('device', values.device);
        if (values.company) query.set('company', values.company);
        if (values.limit) query.set('limit', values.limit);
        const answer = await call(options, 'GET', `/ops/journal?${query}`);
        return show(answer, () =>
          table(
            (answer.entries as Row[]).map((entry) => ({
              ...entry,
              barrier: (entry.barrier as Row | null)?.name,
              company: (entry.company as Row).domain ?? (entry.company as Row).name,
            })),
            ['id', 'at', 'barrier', 'number_label', 'company', 'actor', 'outcome', 'detail'],
          ),
        );
      }
      throw new UsageError(`unknown command "${positionals.join(' ')}"`);
    }
  }
}

function readTokenFile(): string {
  const file = resolve(process.env.GATELINK_DATA_DIR ?? './.data', 'operator-token');
  if (!existsSync(file)) {
    throw new UsageError(`no operator token: pass --token, set OPERATOR_TOKEN, or run where ${file} exists`);
  }
  return readFileSync(file, 'utf8').trim();
}

run(process.argv.slice(2)).then(
  (output) => process.stdout.write(`${output}\n`),
  (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`gatelink-admin: ${message}\n`);
    if (error instanceof UsageError) process.stderr.write('Run gatelink-admin --help for the commands.\n');
    process.exitCode = error instanceof UsageError ? 2 : 1;
  },
);
