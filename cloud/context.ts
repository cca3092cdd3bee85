import type { CloudContext } from './foundation/context.js';
import type { Mailer } from './links/mail/mailer.js';
import type { Resolver } from './links/outbound-http/safe-connection.js';
import type { CompanyCache } from './rules/call-auth/company-cache.js';
import type { NonceLedger } from './rules/call-auth/nonces.js';
import type { KeyFileFetcher } from './rules/domain-keys/key-file.js';
import type { VapidKey } from './rules/vapid-key/vapid-key-file.js';

/**
 * The one context the cloud assembles (cloud/cloud.ts): the ground every part stands on
 * (cloud/foundation/context.ts) with the services the parts declare they need next to themselves
 * (`CallAuthContext`, `CompaniesContext`, `DomainKeysContext`, `SignInCodesContext`, ...), each of which it
 * satisfies as it is. Only the top of cloud/ names it.
 */
export interface AssembledContext extends CloudContext {
  readonly fetchKeyFile: KeyFileFetcher;
  /** Every address a host name resolves to (DNS); tests stand in for the network here. */
  readonly resolveHost: Resolver;
  /** Companies authenticated recently; whatever changes a company tells it (`forget`). */
  readonly companyCache: CompanyCache;
  /** Signed calls' nonces, inserted in batches (docs/design.md section 2.1). */
  readonly nonces: NonceLedger;
  /** Sends one-time sign-in codes and notices: over SMTP, or into the log when none is configured. */
  readonly mailer: Mailer;
  /** The VAPID key that signs Web Push requests (docs/design.md section 10.6). */
  readonly vapid: VapidKey;
}
