import type { VerifyKey } from '../../../shared/crypto/ed25519.js';

/**
 * What domain keys need of a key-file fetcher (docs/design.md section 2): the company's public key from
 * `https://<domain>/.well-known/service.json`, or why not. cloud/links/outbound-http/keyfile-fetch.ts fetches
 * it over the network; tests and the demo stand in.
 */
export type KeyFileFailure =
  | 'invalid_domain'
  | 'not_public'
  | 'unreachable'
  | 'timeout'
  | 'bad_status'
  | 'too_large'
  | 'bad_redirect'
  | 'invalid_json'
  | 'invalid_key';

export type KeyFileResult =
  | { ok: true; key: VerifyKey }
  | { ok: false; reason: KeyFileFailure; message: string };

/** Fetches a company's key file by its ASCII domain; bound to the configuration in cloud/cloud.ts. */
export type KeyFileFetcher = (domain: string) => Promise<KeyFileResult>;
