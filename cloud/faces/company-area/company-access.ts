import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import { MAX_ID } from '../../foundation/http/validation.js';
import type { Session } from '../../foundation/web/sessions.js';
import { signedIn, type WebDeps } from '../../foundation/web/web-deps.js';
import { type Membership, membership } from '../../rules/companies/members.js';
import { type ActingMember, actingMember } from '../../rules/member-actions/member-actions.js';

/**
 * Who may see a company's pages (docs/design.md section 11.1): its members, looked up on every request. Anyone
 * else, and any company that does not exist, gets the same 404, so a member of one company learns nothing of
 * another, not even that it exists; a removed member's next request already gets it.
 */
const companyParams = z.object({ companyId: z.coerce.number().int().positive().max(MAX_ID) });

export interface CompanyVisit {
  account: Session;
  membership: Membership;
}

export function noSuchCompanyPage(): ApiError {
  return new ApiError('not_found', { message: 'There is no company page at this address.' });
}

/**
 * The signed-in member and their company of `/company/:companyId/...`; null when the reply was sent. A viewer
 * reads every page and sends no form: every change goes by POST, so this one place refuses them all.
 */
export async function companyVisit(
  deps: WebDeps,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<CompanyVisit | null> {
  const account = signedIn(request, reply);
  if (!account) return null;
  const params = companyParams.safeParse(request.params);
  if (!params.success) throw noSuchCompanyPage();
  const found = await membership(deps.ctx, account.customerId, params.data.companyId);
  if (!found) throw noSuchCompanyPage();
  if (found.role === 'viewer') {
    if (request.method !== 'GET' && request.method !== 'HEAD') throw new ApiError('viewer_only');
    // Its pages then leave out the forms a viewer could not send (ChangeForm, company-frame.tsx).
    request.lookOnly = true;
  }
  return { account, membership: found };
}

/** The member of this visit as the company's record of actions names them (docs/design.md section 11.8). */
export function actorOf(visit: CompanyVisit): ActingMember {
  return actingMember(visit.account);
}

/** The same, for what only the owner may do (change the members): anyone else is told who can. */
export async function ownerVisit(
  deps: WebDeps,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<CompanyVisit | null> {
  const visit = await companyVisit(deps, request, reply);
  if (visit && visit.membership.role !== 'owner') throw new ApiError('owner_required');
  return visit;
}
