import { isCode, normalizeCode } from '../../../shared/codes.js';
import type { Database } from '../../foundation/db/database.js';
import type { RequestState } from '../../foundation/db/schema.js';
import { type CompanyDisplay, companyDisplay } from '../companies/display.js';
import { type AccessRequest, effectiveState, findRequestByCode, REQUEST_CODE_LENGTH } from './requests.js';

/**
 * What `/c/<code>` may tell the person who opened it (docs/design.md section 10.3): reading it changes nothing.
 * A code is read as a person types it; one that cannot be a code at all is told apart from a well-formed code
 * that names no request, so that a typing slip gets a hint instead of "unknown". Who holds a claimed request
 * is told only as "you" or "someone else", never who.
 */
export type RequestView =
  | { kind: 'mistyped' }
  | { kind: 'unknown'; code: string }
  | {
      kind: 'found';
      code: string;
      request: AccessRequest;
      company: CompanyDisplay;
      state: RequestState;
      holder: 'nobody' | 'you' | 'someone else';
    };

export async function requestView(
  db: Database,
  input: { typed: string; customerId: number | null; now: Date },
): Promise<RequestView> {
  const code = normalizeCode(input.typed);
  if (!isCode(code, REQUEST_CODE_LENGTH)) return { kind: 'mistyped' };
  const request = await findRequestByCode(db, code);
  if (!request) return { kind: 'unknown', code };
  const company = await db
    .selectFrom('companies')
    .select(['id', 'name', 'domain', 'key_pub', 'logo_hash'])
    .where('id', '=', request.company_id)
    .executeTakeFirstOrThrow();
  const holder =
    request.customer_id === null
      ? 'nobody'
      : request.customer_id === input.customerId
        ? 'you'
        : 'someone else';
  return {
    kind: 'found',
    code,
    request,
    company: companyDisplay(company),
    state: effectiveState(request, input.now),
    holder,
  };
}
