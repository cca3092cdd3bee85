import type { CallAuthContext } from '../../rules/call-auth/call-auth-context.js';
import type { CompaniesContext } from '../../rules/companies/companies-context.js';

/** What the operator API stands on beyond the ground: the rules of companies and of their credentials. */
export type OperatorApiContext = CompaniesContext & CallAuthContext;
