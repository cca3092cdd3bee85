import { existsSync } from 'node:fs';
import type { ClientAuth } from './client/index.js';
import { GatelinkClient } from './client/index.js';
import type { BooleanOption, Environment, StringOption, Values } from './command.js';
import { readKeyFile, UsageError } from './key-file.js';

/**
 * Where the calls of `request`, `status` and `open` go and how they prove who sends them (docs/design.md section
 * 11.2; cloud/README.md, "Authentication"): each setting from its flag, else from its environment variable, so a
 * script can set them once and a person can override one on the command line.
 */
export const CONNECTION_OPTIONS: Record<'url' | 'key' | 'org' | 'secret', StringOption> &
  Record<'sandbox', BooleanOption> = {
  url: { type: 'string' },
  key: { type: 'string' },
  org: { type: 'string' },
  secret: { type: 'string' },
  sandbox: { type: 'boolean' },
};

export const CONNECTION_USAGE = `Where and as whom (a flag wins over its environment variable):
  --url BASE_URL         the service's address (GATELINK_URL), such as https://gate.example.com
  --key FILE             the key file keygen wrote, to sign (GATELINK_KEY_FILE); company-key.json when it
                         exists and nothing else is given
  --org ID --secret S    a company without a domain (GATELINK_ORG_ID, GATELINK_SECRET); prefer the variable
                         for the secret, which a command line shows to every user of the machine
  --sandbox              your sandbox (GATELINK_SANDBOX=1): a simulated customer and barrier, apart from
                         every real one; with a secret, your sandbox secret (glsb_)`;

export const DEFAULT_KEY_FILE = 'company-key.json';

/** A client for the configured service and company, or a UsageError naming what is missing. */
export function companyClient(values: Values, env: Environment): GatelinkClient {
  const sandbox = values.sandbox === true || env.GATELINK_SANDBOX === '1';
  return new GatelinkClient({ baseUrl: serviceUrl(values, env), auth: companyAuth(values, env), sandbox });
}

/** The service's address from --url or GATELINK_URL, an http or https one. */
export function serviceUrl(values: Values, env: Environment): string {
  const url = flag(values, 'url') ?? nonEmpty(env.GATELINK_URL);
  if (url === undefined) {
    throw new UsageError(
      'the service address is missing: give --url, or set GATELINK_URL, such as https://gate.example.com',
    );
  }
  const parsed = URL.parse(url);
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) {
    throw new UsageError(`${url} is not an http or https address`);
  }
  return url.replace(/\/+$/, '');
}

/**
 * The company's credentials. Flags are read first: any of --key, --org, --secret chooses the mode, and the
 * environment fills in only the other half of a secret. Then GATELINK_KEY_FILE or GATELINK_ORG_ID with
 * GATELINK_SECRET, then company-key.json in the current folder.
 */
export function companyAuth(values: Values, env: Environment): ClientAuth {
  const keyFlag = flag(values, 'key');
  const secretFlags = flag(values, 'org') !== undefined || flag(values, 'secret') !== undefined;
  if (keyFlag !== undefined && secretFlags) {
    throw new UsageError('give either --key (a company that signs) or --org and --secret, not both');
  }
  if (keyFlag !== undefined) return readKeyFile(keyFlag);
  if (secretFlags) return secretAuth(values, env);
  const keyFile = nonEmpty(env.GATELINK_KEY_FILE);
  const secretEnv =
    nonEmpty(env.GATELINK_ORG_ID) !== undefined || nonEmpty(env.GATELINK_SECRET) !== undefined;
  if (keyFile !== undefined && secretEnv) {
    throw new UsageError(
      'GATELINK_KEY_FILE and GATELINK_ORG_ID/GATELINK_SECRET are both set: unset the one you do not use, or give a flag',
    );
  }
  if (keyFile !== undefined) return readKeyFile(keyFile);
  if (secretEnv) return secretAuth(values, env);
  if (existsSync(DEFAULT_KEY_FILE)) return readKeyFile(DEFAULT_KEY_FILE);
  throw new UsageError(
    `no credentials: give --key FILE (or GATELINK_KEY_FILE) for a company that signs with its domain's key, ` +
      `or --org and --secret (or GATELINK_ORG_ID and GATELINK_SECRET); there is no ${DEFAULT_KEY_FILE} here`,
  );
}

function secretAuth(values: Values, env: Environment): ClientAuth {
  const org = flag(values, 'org') ?? nonEmpty(env.GATELINK_ORG_ID);
  const secret = flag(values, 'secret') ?? nonEmpty(env.GATELINK_SECRET);
  if (org === undefined)
    throw new UsageError('the company id is missing: give --org, or set GATELINK_ORG_ID');
  if (secret === undefined) {
    throw new UsageError('the secret is missing: set GATELINK_SECRET, or give --secret');
  }
  if (!/^[1-9]\d{0,15}$/.test(org)) throw new UsageError(`the company id ${org} is not a number`);
  return { orgId: Number(org), secret };
}

function flag(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
