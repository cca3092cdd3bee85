import type { WebDeps } from '../../foundation/web/web-deps.js';
import type { SignInCodesContext } from '../../rules/sign-in-codes/send-code.js';

/** What the customer application stands on beyond the ground: sign-in codes sent by e-mail. */
export type CustomerPagesContext = SignInCodesContext;

export type CustomerPagesDeps = WebDeps<CustomerPagesContext>;
