import type { WebDeps } from '../../foundation/web/web-deps.js';
import type { Mailer } from '../../links/mail/mailer.js';
import type { BrokerAccounts } from '../../rules/devices/device-lifecycle.js';
import type { PushSubscriptionsContext } from '../../rules/push-subscriptions/subscriptions.js';
import type { SignInCodesContext } from '../../rules/sign-in-codes/send-code.js';
import type { VapidContext } from '../../rules/vapid-key/vapid-key-file.js';

/**
 * What the customer application stands on beyond the ground: sign-in codes sent by e-mail, and the notices a
 * household sends (an invitation, a request passed on; docs/design.md section 9.2); the browsers' push
 * subscriptions, checked as their delivery will connect, and the VAPID key they are made with (section 10.6).
 */
export type CustomerPagesContext = SignInCodesContext &
  PushSubscriptionsContext &
  VapidContext & {
    readonly mailer: Pick<Mailer, 'sendCode' | 'sendNotice'>;
  };

/** The barrier pages also remove a replaced controller's broker account (docs/design.md section 9.1). */
export type CustomerPagesDeps = WebDeps<CustomerPagesContext> & { accounts: BrokerAccounts };
