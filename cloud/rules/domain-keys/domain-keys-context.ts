import type { CloudContext } from '../../foundation/context.js';
import type { KeyFileFetcher } from './key-file.js';

/**
 * What pinning and re-confirming a company's key stands on beyond the ground: a way to fetch its key file
 * (cloud/links/outbound-http/keyfile-fetch.ts), and whatever keeps a copy of companies, told to forget one
 * whose key changed.
 */
export interface DomainKeysContext extends CloudContext {
  readonly fetchKeyFile: KeyFileFetcher;
  readonly companyCache: { forget(companyId: number): void };
}
