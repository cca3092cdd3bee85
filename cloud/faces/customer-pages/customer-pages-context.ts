import type { WebDeps } from '../../foundation/web/web-deps.js';
import type { BrokerAccounts } from '../../rules/devices/device-lifecycle.js';
import type { SignInCodesContext } from '../../rules/sign-in-codes/send-code.js';

/** What the customer application stands on beyond the ground: sign-in codes sent by e-mail. */
export type CustomerPagesContext = SignInCodesContext;

/** The barrier pages also remove a replaced controller's broker account (docs/design.md section 9.1). */
export type CustomerPagesDeps = WebDeps<CustomerPagesContext> & { accounts: BrokerAccounts };
