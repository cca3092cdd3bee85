import type { FastifyBaseLogger } from 'fastify';
import type { SigningKey } from '../../shared/crypto/ed25519.js';
import type { Clock } from './clock.js';
import type { CloudConfig } from './config.js';
import type { Database } from './db/database.js';
import type { CloudMetrics } from './metrics/cloud-metrics.js';
import type { Foreground } from './priority/foreground.js';

/**
 * What every part of the cloud stands on: configuration, database, clock, logger, the cloud's own key and its
 * metrics. A part that needs more declares it next to itself, as a narrow interface extending this one (a
 * company cache for call-auth, a mailer for sign-in codes, a key-file fetcher for domain keys); the one object
 * that has it all is assembled at the top (cloud/context.ts), so nothing here names a feature's types.
 */
export interface CloudContext {
  readonly config: CloudConfig;
  readonly db: Database;
  readonly clock: Clock;
  readonly log: FastifyBaseLogger;
  /** The service key, the cloud's own Ed25519 key: signs commands to controllers and events to companies. */
  readonly serviceKey: SigningKey;
  /** This instance's Prometheus metrics (docs/design.md section 8.1), its own registry. */
  readonly metrics: CloudMetrics;
  /** The openings under way on this instance, which background work gives way to (./priority/foreground.ts). */
  readonly foreground: Foreground;
  /** Settled once the HTTP server listens (the port may be chosen by the system). */
  baseUrl(): string;
}
