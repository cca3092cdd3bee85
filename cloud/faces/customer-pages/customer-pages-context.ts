import type { WebDeps } from '../../foundation/web/web-deps.js';
import type { Mailer } from '../../links/mail/mailer.js';
import type { BrokerAccounts } from '../../rules/devices/device-lifecycle.js';
import type { SignInCodesContext } from '../../rules/sign-in-codes/send-code.js';

/**
 * What the customer application stands on beyond the ground: sign-in codes sent by e-mail, and the notices a
 * household sends (an invitation, a request passed on; docs/design.md section 9.2).
 */
export type CustomerPagesContext = SignInCodesContext & {
  readonly mailer: Pick<Mailer, 'sendCode' | 'sendNotice'>;
};

/** The barrier pages also remove a replaced controller's broker account (docs/design.md section 9.1). */
export type CustomerPagesDeps = WebDeps<CustomerPagesContext> & { accounts: BrokerAccounts };
