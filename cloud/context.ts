import type { FastifyBaseLogger } from 'fastify';
import type { SigningKey } from '../shared/crypto/ed25519.js';
import type { Clock } from './foundation/clock.js';
import type { CloudConfig } from './foundation/config.js';
import type { Database } from './foundation/db/database.js';
import type { CloudMetrics } from './foundation/metrics/cloud-metrics.js';
import type { Mailer } from './links/mail/mailer.js';
import type { Resolver } from './links/outbound-http/safe-connection.js';
import type { CompanyCache } from './rules/call-auth/company-cache.js';
import type { NonceLedger } from './rules/call-auth/nonces.js';
import type { KeyFileFetcher } from './rules/domain-keys/confirm.js';

/**
 * What every part of the cloud is handed: configuration, database, clock, logger and the few shared
 * services. Built once in cloud.ts; nothing reaches for module-level state.
 */
export interface CloudContext {
  readonly config: CloudConfig;
  readonly db: Database;
  readonly clock: Clock;
  readonly log: FastifyBaseLogger;
  /** The cloud's own Ed25519 key: signs commands to controllers and events to companies. */
  readonly signingKey: SigningKey;
  readonly fetchKeyFile: KeyFileFetcher;
  /** Every address a host name resolves to (DNS); tests stand in for the network here. */
  readonly resolveHost: Resolver;
  /** Companies authenticated recently; whatever changes a company tells it (`forget`). */
  readonly companies: CompanyCache;
  /** Signed calls' nonces, inserted in batches (docs/design.md section 2.1). */
  readonly nonces: NonceLedger;
  /** Sends one-time sign-in codes: over SMTP, or into the log when none is configured. */
  readonly mailer: Mailer;
  /** This instance's Prometheus metrics (docs/design.md section 8.1), its own registry. */
  readonly metrics: CloudMetrics;
  /** Settled once the HTTP server listens (the port may be chosen by the system). */
  baseUrl(): string;
}
