import type { CloudContext } from '../../foundation/context.js';
import type { WebDeps } from '../../foundation/web/web-deps.js';
import type { Mailer } from '../../links/mail/mailer.js';
import type { CallAuthContext } from '../../rules/call-auth/call-auth-context.js';
import type { CallbackAddressContext } from '../../rules/companies/callback-address.js';
import type { CompaniesContext } from '../../rules/companies/companies-context.js';
import type { LogosContext } from '../../rules/logos/logo-store.js';

/**
 * What the company account area stands on beyond the ground: what the rules it acts through declare (a
 * company's secrets, key, logo and callback address), and a mailer for the notice a new member gets.
 */
export type CompanyAreaContext = CloudContext &
  CallAuthContext &
  CompaniesContext &
  LogosContext &
  CallbackAddressContext & { readonly mailer: Pick<Mailer, 'sendNotice'> };

export type CompanyAreaDeps = WebDeps<CompanyAreaContext>;
