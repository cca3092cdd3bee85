import { endpointHealthWords } from '../rules/events/endpoint-health.js';
import { isMemberActionName, memberActionSentence } from '../rules/member-actions/member-action-words.js';
import { type SandboxUse, sandboxUseWords } from '../rules/sandbox/sandbox-use.js';
import { backupInto, restoreFrom } from './backup/backup-commands.js';
import { keysInit } from './keys-init.js';
import { type Connection, call, type Row, table, UsageError } from './operator-client.js';
import { RELEASE_COMMANDS } from './releases/cloud-release-commands.js';
import { releaseKeygen, releaseSign } from './releases/release-commands.js';

/**
 * Every `gatelink-admin` command (cloud/README.md, "Operator API"): its words, its arguments, what it calls,
 * and how its answer reads. The usage text is made from this table, so a command cannot be missing from it.
 */
export interface Flags {
  name?: string | undefined;
  domain?: string | undefined;
  email?: string | undefined;
  label?: string | undefined;
  device?: string | undefined;
  company?: string | undefined;
  limit?: string | undefined;
  reason?: string | undefined;
  key?: string | undefined;
  out?: string | undefined;
  manifest?: string | undefined;
  all?: boolean | undefined;
  percent?: string | undefined;
  devices?: string | undefined;
  downgrade?: boolean | undefined;
  'stop-at'?: string | undefined;
}

export interface CommandInput {
  connection: Connection;
  flags: Flags;
  /** The word after the command's own, such as the id of `company approve 3`. */
  arg: string | undefined;
  /** Every word after the command's own, for commands that take two (`device replace OLD NEW`). */
  args: string[];
  /** How the user ran the program (`npm run admin --` or `gatelink-admin`), for the hints printed. */
  program: string;
}

/** What a command got: the API's answer (printed as is with --json) and its text for a person. */
export interface CommandOutput {
  answer: Row;
  text(): string;
}

interface CommandWords {
  /** The command's words, such as `company approve`. */
  name: string;
  /** Its arguments as the usage shows them. */
  args?: string;
  /** One line on what it does, where the words alone do not say it. */
  help?: string;
}

/** A command that calls the operator API of a running cloud. */
export interface RemoteCommand extends CommandWords {
  local?: false;
  run(input: CommandInput): Promise<CommandOutput>;
}

/**
 * A command that works on this machine's files (and database, with the cloud's own settings), calling no cloud
 * (`keys init`, `backup`, `restore`, `release keygen|sign`). `arg`: the word after the command's, such as a folder.
 */
export interface LocalCommand extends CommandWords {
  local: true;
  run(env: NodeJS.ProcessEnv, arg: string | undefined, flags: Flags): CommandOutput | Promise<CommandOutput>;
}

export type AdminCommand = RemoteCommand | LocalCommand;

function positiveId(text: string | undefined, command: string): number {
  const id = Number(text);
  if (!Number.isSafeInteger(id) || id < 1)
    throw new UsageError(`${command} needs a numeric id, such as: ${command} 3`);
  return id;
}

function deviceId(text: string | undefined, command: string): string {
  if (!text || !/^D[0-9A-Z]{10}$/.test(text)) {
    throw new UsageError(`${command} needs device ids as device list shows them, such as D0123456789`);
  }
  return text;
}

function required(value: string | undefined, flag: string, command: string): string {
  if (!value) throw new UsageError(`${command} needs ${flag}`);
  return value;
}

async function approve(input: CommandInput, command: string, path: 'approve' | 'confirm-key') {
  const id = positiveId(input.arg, command);
  const answer = await call(input.connection, 'POST', `/ops/companies/${id}/${path}`);
  const company = answer.company as Row;
  const text = () =>
    company.key
      ? [
          `Company ${id} "${company.name}" approved with the key from ${company.domain_display}:`,
          `  key          ${company.key}`,
          `  fingerprint  ${answer.fingerprint}`,
          'The key is pinned: a different key on the domain is refused until its rotation is confirmed.',
        ].join('\n')
      : `Company ${id} "${company.name}" approved. Issue its secret with: ${input.program} company secret ${id}`;
  return { answer, text };
}

/** A member's action of `GET /ops/companies/:id` in the console's words; one this program does not know, as it came. */
function memberLine(row: Row): string {
  const [member, action, detail] = [String(row.member), String(row.action), row.detail];
  const concerned = typeof detail === 'string' ? detail : null;
  const sandbox = row.sandbox === true;
  if (isMemberActionName(action)) return memberActionSentence({ member, action, detail: concerned, sandbox });
  return [sandbox ? 'In the sandbox,' : '', member, action, concerned].filter(Boolean).join(' ');
}

/** A controller's progress in its newest rollout, as one cell: `rolled_back (crashed) in rollout 3`. */
function updateCell(update: unknown): string | null {
  if (!update || typeof update !== 'object') return null;
  const { state, reason, rollout_id } = update as Row;
  return `${state}${reason ? ` (${reason})` : ''} in rollout ${rollout_id}`;
}

export const COMMANDS: readonly AdminCommand[] = [
  {
    name: 'keys init',
    help: 'on this machine: make the service key and operator token file the cloud reads (never over existing ones)',
    local: true,
    run: (env) => keysInit(env),
  },
  {
    name: 'backup',
    args: 'FOLDER',
    help: "on the cloud's machine: the database, service key and operator token into a new folder",
    local: true,
    run: (env, folder) => backupInto(folder, env),
  },
  {
    name: 'restore',
    args: 'FOLDER',
    help: 'on a new server: onto an empty database and a data folder without a service key',
    local: true,
    run: (env, folder) => restoreFrom(folder, env),
  },
  {
    name: 'release keygen',
    args: '--out FILE',
    help: "offline: make the operator's release key (PEM, 0600) and print its public key for RELEASE_PUBLIC_KEY",
    local: true,
    run: (_env, _arg, flags) => releaseKeygen(flags.out),
  },
  {
    name: 'release sign',
    args: 'BUNDLE --key FILE',
    help: 'offline: sign a bundle of npm run release:device into BUNDLE.manifest.json',
    local: true,
    run: (_env, bundle, flags) => releaseSign(bundle, flags.key),
  },
  {
    name: 'company add',
    args: '--name NAME [--domain DOMAIN] [--email EMAIL]',
    async run({ connection, flags, program }) {
      const answer = await call(connection, 'POST', '/ops/companies', {
        name: required(flags.name, '--name', 'company add'),
        ...(flags.domain ? { domain: flags.domain } : {}),
        ...(flags.email ? { contact_email: flags.email } : {}),
      });
      const company = answer.company as Row;
      const next = company.domain
        ? `Next: ${program} company approve ${company.id}  (fetches and pins the key at https://${company.domain}/.well-known/service.json)`
        : `Next: ${program} company approve ${company.id}, then ${program} company secret ${company.id}`;
      return {
        answer,
        text: () => [`Company ${company.id} "${company.name}" added (pending).`, next].join('\n'),
      };
    },
  },
  {
    name: 'company list',
    async run({ connection }) {
      const answer = await call(connection, 'GET', '/ops/companies');
      const columns = ['id', 'name', 'domain_display', 'status', 'key_confirmed_at', 'key_check_error'];
      return { answer, text: () => table(answer.companies as Row[], columns) };
    },
  },
  {
    name: 'company show',
    args: 'ID',
    help: 'a company, what operators did to it and what its members did last',
    async run({ connection, arg }) {
      const id = positiveId(arg, 'company show');
      const answer = await call(connection, 'GET', `/ops/companies/${id}`);
      const company = answer.company as Row;
      // The console's page of the company says the same (faces/console/company-page.tsx).
      const head = [
        `Company ${company.id} "${company.name}": ${company.status}`,
        `Domain   ${company.domain_display ?? '(none: calls with a secret)'}`,
        ...(company.key ? [`Key      ${company.key} (confirmed ${company.key_confirmed_at})`] : []),
        `Sandbox  ${sandboxLine(answer.sandbox as Row | null)}`,
        '',
        'What operators did:',
        table(answer.actions as Row[], ['at', 'operator', 'action', 'reason']),
        '',
        'What members did (newest first):',
      ];
      const members = (answer.member_actions as Row[]).map((row) => ({ at: row.at, did: memberLine(row) }));
      return { answer, text: () => [...head, table(members, ['at', 'did'])].join('\n') };
    },
  },
  {
    name: 'company approve',
    args: 'ID',
    help: 'a domain company: fetch, show and pin its key',
    run: (input) => approve(input, 'company approve', 'approve'),
  },
  {
    name: 'company reject',
    args: 'ID --reason REASON',
    help: 'refuse a pending company; it reads the reason',
    async run({ connection, arg, flags }) {
      const id = positiveId(arg, 'company reject');
      const reason = required(flags.reason, '--reason', 'company reject');
      const answer = await call(connection, 'POST', `/ops/companies/${id}/reject`, { reason });
      return { answer, text: () => `Company ${id} not approved; it reads: ${reason}` };
    },
  },
  {
    name: 'company suspend',
    args: 'ID [--reason REASON]',
    async run({ connection, arg, flags }) {
      const id = positiveId(arg, 'company suspend');
      const body = flags.reason ? { reason: flags.reason } : undefined;
      const answer = await call(connection, 'POST', `/ops/companies/${id}/suspend`, body);
      return { answer, text: () => `Company ${id} suspended: its calls now answer 403 org_not_approved.` };
    },
  },
  {
    name: 'company resume',
    args: 'ID',
    help: 'a suspended company calls again',
    async run({ connection, arg }) {
      const id = positiveId(arg, 'company resume');
      const answer = await call(connection, 'POST', `/ops/companies/${id}/resume`);
      return { answer, text: () => `Company ${id} approved again: its calls work with the key it had.` };
    },
  },
  {
    name: 'company secret',
    args: 'ID',
    help: 'issue a secret (shown once; the previous one works 24 h more)',
    async run({ connection, arg }) {
      const id = positiveId(arg, 'company secret');
      const answer = await call(connection, 'POST', `/ops/companies/${id}/secret`);
      const lines = [
        `org_id  ${answer.org_id}`,
        `secret  ${answer.secret}`,
        'Shown once: hand it to the company now; only its hash is kept.',
        answer.previous_valid_until
          ? `The previous secret keeps working until ${answer.previous_valid_until}.`
          : '',
      ];
      return { answer, text: () => lines.filter(Boolean).join('\n') };
    },
  },
  {
    name: 'company confirm-key',
    args: 'ID',
    help: "pin the key now published on the company's domain",
    run: (input) => approve(input, 'company confirm-key', 'confirm-key'),
  },
  {
    name: 'device add',
    args: '--label LABEL',
    help: 'a device id and a one-time provisioning code (24 h)',
    async run({ connection, flags }) {
      const answer = await call(connection, 'POST', '/ops/devices', {
        label: required(flags.label, '--label', 'device add'),
      });
      const device = answer.device as Row;
      const lines = [
        `Device ${device.device_id} "${device.label}" created.`,
        `Provisioning code: ${device.provisioning_code}  (single use, valid until ${device.expires_at})`,
        `On the controller: gatelink-device provision --cloud ${typeof answer.cloud_url === 'string' ? answer.cloud_url : connection.url} --code ${device.provisioning_code}`,
      ];
      return { answer, text: () => lines.join('\n') };
    },
  },
  {
    name: 'device list',
    async run({ connection }) {
      const answer = await call(connection, 'GET', '/ops/devices');
      const rows = (answer.devices as Row[]).map((device) => ({
        ...device,
        update: updateCell(device.update),
      }));
      const columns = [
        'id',
        'label',
        'provisioned',
        'online',
        'customer_id',
        'last_seen',
        'version',
        'arch',
        'update',
      ];
      return { answer, text: () => table(rows, columns) };
    },
  },
  ...RELEASE_COMMANDS,
  {
    name: 'device pairing-code',
    args: 'DEVICE-ID',
    help: 'the pairing code of a provisioned controller on no account (current, or a fresh one for 24 h)',
    async run({ connection, arg }) {
      const id = deviceId(arg, 'device pairing-code');
      const answer = await call(connection, 'POST', `/ops/devices/${id}/pairing-code`);
      const lines = [
        `Pairing code of ${id}: ${answer.pairing_code}  (valid until ${answer.pairing_expires_at})`,
        'The customer adds the barrier with it under "Add a barrier", or enters it under "Replace the controller".',
      ];
      return { answer, text: () => lines.join('\n') };
    },
  },
  {
    name: 'receipts check',
    args: 'DEVICE-ID',
    help: "check every receipt chain of a controller's barrier in full now (the customer's page shows the verdict)",
    async run({ connection, arg }) {
      const id = deviceId(arg, 'receipts check');
      const answer = await call(connection, 'POST', `/ops/devices/${id}/receipts/check`);
      const chains = answer.chains as Row[];
      const lines = chains.map((chain) =>
        chain.intact
          ? `Customer ${chain.customer_id}: intact, ${chain.entries} sealed entries checked from the first.`
          : `Customer ${chain.customer_id}: BROKEN at entry ${chain.broken_entry ?? '(missing)'} (place ${chain.broken_seq}): ${chain.reason}.`,
      );
      if (lines.length === 0) lines.push(`No entry of ${id} is sealed yet: there is no chain to check.`);
      return { answer, text: () => lines.join('\n') };
    },
  },
  {
    name: 'device remove',
    args: 'DEVICE-ID',
    help: 'retire a controller: its keys revoked, its broker account removed, never pairable again',
    async run({ connection, arg }) {
      const id = deviceId(arg, 'device remove');
      const answer = await call(connection, 'POST', `/ops/devices/${id}/remove`);
      const kept = answer.deleted
        ? 'The record was deleted: nothing referred to it.'
        : 'The record is kept, retired, for the journal entries and keys that refer to it.';
      const text = () => [`Device ${id} retired; keys revoked: ${answer.revoked_keys}.`, kept].join('\n');
      return { answer, text };
    },
  },
  {
    name: 'device replace',
    args: 'OLD-ID NEW-ID',
    help: 'move a barrier to a new controller: name, keys, journal, objects by label; the old one retired',
    async run({ connection, args }) {
      const oldId = deviceId(args[0], 'device replace');
      const newId = deviceId(args[1], 'device replace');
      const answer = await call(connection, 'POST', `/ops/devices/${oldId}/replace`, { new_device: newId });
      const carried = answer.carried_objects as string[];
      const lines = [
        `Barrier moved from ${oldId} to ${newId}; ${oldId} is retired.`,
        `Objects carried over by label: ${carried.length > 0 ? carried.join(', ') : 'none'}.`,
        `Keys revoked for want of any object on the new controller: ${answer.revoked_keys}.`,
      ];
      return { answer, text: () => lines.join('\n') };
    },
  },
  {
    name: 'customer add',
    args: '--name NAME [--email EMAIL]',
    async run({ connection, flags }) {
      const answer = await call(connection, 'POST', '/ops/customers', {
        display_name: required(flags.name, '--name', 'customer add'),
        ...(flags.email ? { email: flags.email } : {}),
      });
      const customer = answer.customer as Row;
      return { answer, text: () => `Customer ${customer.id} "${customer.display_name}" added.` };
    },
  },
  {
    name: 'journal',
    args: '[--device ID] [--company ID] [--limit N]',
    async run({ connection, flags }) {
      const query = new URLSearchParams();
      if (flags.device) query.set('device', flags.device);
      if (flags.company) query.set('company', flags.company);
      if (flags.limit) query.set('limit', flags.limit);
      const answer = await call(connection, 'GET', `/ops/journal?${query}`);
      const rows = (answer.entries as Row[]).map((entry) => ({
        ...entry,
        barrier: (entry.barrier as Row | null)?.name,
        company: (entry.company as Row).domain ?? (entry.company as Row).name,
      }));
      const columns = ['id', 'at', 'barrier', 'number_label', 'company', 'actor', 'outcome', 'detail'];
      return { answer, text: () => table(rows, columns) };
    },
  },
  {
    name: 'events',
    args: '--company ID [--limit N]',
    help: "a company's endpoints and their delivery log, newest first",
    async run({ connection, flags }) {
      const id = positiveId(required(flags.company, '--company', 'events'), 'events --company');
      const query = new URLSearchParams(flags.limit ? { limit: flags.limit } : {});
      const answer = await call(connection, 'GET', `/ops/companies/${id}/events?${query}`);
      const endpoints = Array.isArray(answer.endpoints) ? (answer.endpoints as Row[]) : [];
      // The console's words for the same state (faces/console/company-page.tsx), one line per endpoint
      // (docs/design.md section 6.2).
      const head =
        endpoints.length === 0
          ? [
              `${'Events'.padEnd(18)}no callback address: nothing is sent`,
              `${'Waiting'.padEnd(18)}${(answer.endpoint as Row).waiting} event(s), kept for about three days, then dropped`,
            ]
          : [
              `${'Events'.padEnd(18)}${endpointHealthWords(
                endpoints.map((endpoint) => ({
                  kinds: Array.isArray(endpoint.kinds) ? (endpoint.kinds as string[]) : null,
                  failing: Boolean(endpoint.failing_since),
                })),
              )}`,
              ...endpoints.map(
                (endpoint) => `${`Endpoint ${endpoint.id}`.padEnd(17)} ${endpointLine(endpoint)}`,
              ),
            ];
      const columns = [
        'at',
        'url',
        'event_id',
        'type',
        'attempt',
        'outcome',
        'status',
        'error',
        'next_attempt_at',
      ];
      return { answer, text: () => [...head, '', table(answer.deliveries as Row[], columns)].join('\n') };
    },
  },
];

/** The command the words name: its two words, or its one (`journal`). */
export function findCommand(words: readonly string[]): AdminCommand | undefined {
  const two = words.slice(0, 2).join(' ');
  return (
    COMMANDS.find((command) => command.name === two) ?? COMMANDS.find((command) => command.name === words[0])
  );
}

/** The commands of a group such as `company`, when `word` names one; none otherwise. */
export function groupCommands(word: string | undefined): readonly AdminCommand[] {
  return COMMANDS.filter((command) => command.name.startsWith(`${word} `));
}

/** The usage lines of every command (or of `commands`), aligned as `gatelink-admin --help` shows them. */
export function commandUsage(
  commands: readonly Pick<AdminCommand, 'name' | 'args' | 'help'>[] = COMMANDS,
): string {
  const words = commands.map((command) => [command.name, command.args].filter(Boolean).join(' '));
  const width = Math.max(...words.map((text) => text.length)) + 2;
  return commands
    .map((command, i) => `  ${command.help ? `${words[i]!.padEnd(width)}${command.help}` : words[i]}`)
    .join('\n');
}

/** An endpoint as the operator API answers it: its address, state, what waits there and the kinds it takes. */
function endpointLine(endpoint: Row): string {
  const error = endpoint.last_error ? `: ${endpoint.last_error}` : '';
  const state = endpoint.failing_since
    ? `FAILING since ${endpoint.failing_since}${error}; nothing is sent there until the company changes the address or asks for a retry`
    : endpoint.paused_until
      ? `retrying, paused until ${endpoint.paused_until}${error}`
      : 'working';
  const kinds = Array.isArray(endpoint.kinds) ? `${endpoint.kinds.join(', ')}, ping` : 'every kind';
  return `${endpoint.url} · ${state} · ${endpoint.waiting} waiting, ${endpoint.retrying} of them retried · takes ${kinds}`;
}

/** The sandbox's use as the operator API answers it, in the console's words (rules/sandbox/sandbox-use.ts). */
function sandboxLine(sandbox: Row | null): string {
  if (!sandbox) return sandboxUseWords(null);
  const use: SandboxUse = {
    madeAt: new Date(String(sandbox.made_at)),
    requests: Number(sandbox.requests),
    openings: Number(sandbox.openings),
    lastOpeningAt: sandbox.last_opening_at ? new Date(String(sandbox.last_opening_at)) : null,
    outcome: sandbox.outcome as SandboxUse['outcome'],
    endpoints: Array.isArray(sandbox.endpoints)
      ? sandbox.endpoints.map((endpoint: Row) => ({
          url: String(endpoint.url),
          failing: endpoint.failing === true,
        }))
      : [],
  };
  return `made ${sandbox.made_at}: ${sandboxUseWords(use)}`;
}
