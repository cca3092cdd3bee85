import { existsSync } from 'node:fs';
import { type CloudConfig, ConfigError } from './config.js';
import { mqttProductionRefusals } from './mqtt-production.js';

/**
 * What production refuses to start with (cloud/README.md, "Running in production"; docs/design.md section 8):
 * every rule here, checked before anything starts, each refusal one line naming the setting and what to do,
 * all of them printed at once so that an operator fixes the lot in one pass. Outside production none applies.
 */

/** What the checks read from disk, read once beside the configuration. */
export interface ProductionFacts {
  readonly serviceKeyFileExists: boolean;
  /** Read only by the VAPID check; a caller that leaves it out is taken to have the file. */
  readonly vapidKeyFileExists?: boolean;
}

/** One rule: its refusal's line, or nothing when the configuration passes it. */
export interface ProductionCheck {
  readonly name: string;
  refusal(config: CloudConfig, facts: ProductionFacts): string | undefined;
}

export const PRODUCTION_CHECKS: readonly ProductionCheck[] = [
  {
    name: 'public address',
    refusal: ({ baseUrl }) => {
      // Customers' pages, passkeys and request URLs name this address; over http their sessions leak.
      if (!baseUrl)
        return 'BASE_URL is unset: set it to the public https:// address, such as https://gate.example.com';
      if (!baseUrl.startsWith('https://')) {
        return `BASE_URL=${baseUrl} is not https: set it to the public https:// address the reverse proxy answers at`;
      }
      return undefined;
    },
  },
  {
    name: 'embedded database',
    refusal: ({ database, allowEmbeddedDatabase }) =>
      // PGlite holds the whole database in this one process (about 922 MB resident) and allows no second
      // instance: a choice to make knowingly, not a default to fall into by forgetting DATABASE_URL.
      'url' in database || allowEmbeddedDatabase
        ? undefined
        : 'DATABASE_URL is unset, so the embedded database would be used: set DATABASE_URL to a PostgreSQL database, or GATELINK_ALLOW_EMBEDDED_DATABASE=1 to run the embedded one knowingly (one process, about 900 MB of memory)',
  },
  {
    name: 'mail server',
    refusal: ({ smtpUrl }) =>
      // Without it sign-in codes are written to the log, where anyone who reads the log could sign in.
      smtpUrl
        ? undefined
        : 'SMTP_URL is unset, so sign-in codes would be written to the log: set it to the mail server, such as smtps://user:password@mail.example.com:465',
  },
  {
    name: 'service key',
    refusal: ({ serviceKeyFile }, { serviceKeyFileExists }) =>
      // Made silently, a second instance would sign with a key no one else knows (docs/design.md section 6).
      serviceKeyFileExists
        ? undefined
        : `the service key file ${serviceKeyFile} does not exist (SIGNING_KEY_FILE): make it once with "gatelink-admin keys init", or copy the first instance's key file there`,
  },
  {
    name: 'VAPID key',
    refusal: ({ vapidKeyFile }, { vapidKeyFileExists }) =>
      // Made silently, a second instance would sign pushes with a key the browsers' subscriptions do not name,
      // and a new one on a restored server would end every subscription (docs/design.md section 10.6).
      vapidKeyFileExists !== false
        ? undefined
        : `the VAPID key file ${vapidKeyFile} does not exist (VAPID_KEY_FILE): make it once with "gatelink-admin keys init", or copy the first instance's key file there`,
  },
  {
    name: 'key file test switch',
    refusal: ({ devKeyfileUrl }) =>
      devKeyfileUrl
        ? 'GATELINK_DEV_KEYFILE_URL is set but NODE_ENV=production: unset it, it is for tests only'
        : undefined,
  },
  {
    name: 'private callbacks test switch',
    refusal: ({ allowPrivateCallbacks }) =>
      allowPrivateCallbacks
        ? 'GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS=1 is set but NODE_ENV=production: unset it, it is for tests only'
        : undefined,
  },
];

/** Lists of refusals kept beside their own settings; each joins the checks' lines in this order. */
export type RefusalList = (config: CloudConfig) => readonly string[];

/** The broker's: never a plain MQTT address across a network for controllers (./mqtt-production.ts). */
export const MORE_PRODUCTION_REFUSALS: readonly RefusalList[] = [mqttProductionRefusals];

/** The facts the checks read, from the disk as it is now. */
export function readProductionFacts(config: CloudConfig): ProductionFacts {
  return {
    serviceKeyFileExists: existsSync(config.serviceKeyFile),
    vapidKeyFileExists: existsSync(config.vapidKeyFile),
  };
}

/** Every refusal of this configuration, one line each; none outside production. */
export function productionRefusals(
  config: CloudConfig,
  facts: ProductionFacts = readProductionFacts(config),
  more: readonly RefusalList[] = MORE_PRODUCTION_REFUSALS,
): string[] {
  if (!config.production) return [];
  const lines = PRODUCTION_CHECKS.map((check) => check.refusal(config, facts));
  return [
    ...lines.filter((line): line is string => line !== undefined),
    ...more.flatMap((list) => list(config)),
  ];
}

/** Throws ConfigError with every refusal, one per line, when production refuses this configuration. */
export function refuseUnsafeProduction(config: CloudConfig): void {
  const lines = productionRefusals(config);
  if (lines.length > 0) throw new ConfigError(lines.join('\n'));
}
