import type { CloudContext } from '../../foundation/context.js';
import type { CompanyCache } from './company-cache.js';
import type { NonceLedger } from './nonces.js';

/** What authenticating a company's call stands on beyond the ground: its cache of companies and the nonces. */
export interface CallAuthContext extends CloudContext {
  /** Companies authenticated recently; whatever changes a company tells it (`forget`). */
  readonly companyCache: CompanyCache;
  /** Signed calls' nonces, inserted in batches (docs/design.md section 2.1). */
  readonly nonces: NonceLedger;
}
