import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CloudContext } from '../../foundation/context.js';
import type { WebDeps } from '../../foundation/web/web-deps.js';
import type { Company } from '../../rules/companies/companies.js';
import { findSandbox, sandboxOpenTo } from '../../rules/sandbox/sandbox-world.js';
import { type CompanyVisit, companyVisit } from './company-access.js';
import { type CompanySection, companyPath } from './company-frame.js';

/**
 * Whose callback address and events a page of the company area shows (docs/design.md section 11.9): the
 * company's own, or its sandbox's. The sandbox's are the same pages under `/company/<id>/sandbox/`, framed by
 * the company under its Sandbox section, since a sandbox has no members or area of its own.
 */
export interface EventSide {
  /** The company whose callback and events these are: the company itself, or its sandbox. */
  readonly holder: Company;
  readonly sandbox: boolean;
  /** Where the side's pages live: `/company/<id>` or `/company/<id>/sandbox`. */
  readonly base: string;
}

/** The pages each side has. */
export type SidePage = 'callback' | 'events';

export function liveSide(company: Company): EventSide {
  return { holder: company, sandbox: false, base: companyPath(company) };
}

/**
 * The sandbox's side, once the company has a sandbox it may use (made by its first sandbox call); null before,
 * or for a company refused or suspended, whose sandbox is closed as its live calls are.
 */
export async function sandboxSide(ctx: CloudContext, company: Company): Promise<EventSide | null> {
  if (!sandboxOpenTo(company.status)) return null;
  const sandbox = await findSandbox(ctx, company.id);
  return sandbox ? { holder: sandbox, sandbox: true, base: companyPath(company, 'sandbox') } : null;
}

export function sidePath(side: EventSide, page: SidePage): string {
  return `${side.base}/${page}`;
}

/** The section of the company's frame a side's page belongs to. */
export function sideSection(side: EventSide, page: SidePage): CompanySection {
  return side.sandbox ? 'sandbox' : page;
}

/** How a side's routes find the company's side: null when it has none yet. */
export type SideOf = (company: Company) => Promise<EventSide | null>;

/**
 * Registers a side's routes twice: the company's under `/company/:companyId`, its sandbox's under
 * `/company/:companyId/sandbox`.
 */
export async function onBothSides(
  ctx: CloudContext,
  register: (prefix: string, sideOf: SideOf) => Promise<void>,
): Promise<void> {
  await register('/company/:companyId', async (company) => liveSide(company));
  await register('/company/:companyId/sandbox', (company) => sandboxSide(ctx, company));
}

/** A member's visit with the side asked for. */
export interface SideVisit {
  visit: CompanyVisit;
  company: Company;
  side: EventSide;
}

/**
 * The member's visit and the side it asks for; or null, the answer sent: no access, or no sandbox yet, for
 * which the sandbox page says how to make one.
 */
export async function sideVisit(
  deps: WebDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  sideOf: SideOf,
): Promise<SideVisit | null> {
  const visit = await companyVisit(deps, request, reply);
  if (!visit) return null;
  const { company } = visit.membership;
  const side = await sideOf(company);
  if (!side) {
    await reply.redirect(companyPath(company, 'sandbox'), 303);
    return null;
  }
  return { visit, company, side };
}
