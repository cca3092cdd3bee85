import { sql } from 'kysely';
import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import type { MemberRole } from '../../foundation/db/schema.js';
import { isUniqueViolation } from '../../foundation/db/unique-violation.js';
import { type ActingMember, recordMemberAction } from '../member-actions/member-actions.js';
import type { Company } from './companies.js';

/**
 * The people who act for a company (docs/design.md section 11.1). A member is a Gatelink account: the one that
 * registered the company is its owner; the owner adds others by e-mail address, and the account that has that
 * address confirmed becomes the member when it signs in. An unconfirmed address on an account never makes it a
 * member: anyone may type anyone's address on a new account (section 10.2).
 */
export interface Membership {
  company: Company;
  role: MemberRole;
  memberId: number;
}

export interface Member {
  id: number;
  email: string | null;
  /** The account's name once the member has signed in, else null. */
  displayName: string | null;
  customerId: number | null;
  role: MemberRole;
  addedAt: Date;
}

/** A company may have this many members; nobody needs more, and it bounds what one owner can make. */
export const MAX_MEMBERS = 50;
/** An account may have this many companies waiting for an operator; more is someone filling the queue. */
export const MAX_WAITING_COMPANIES = 5;

/** The account's confirmed address, the one an added member is matched by. */
function confirmedEmail(customerId: number) {
  return sql<string>`(select email from customers where id = ${customerId} and email_verified_at is not null)`;
}

/** The account's membership of the company, or null: the same answer for a company that does not exist. */
export async function membership(
  ctx: CloudContext,
  customerId: number,
  companyId: number,
): Promise<Membership | null> {
  const row = await ctx.db
    .selectFrom('company_members as m')
    .innerJoin('companies', 'companies.id', 'm.company_id')
    .selectAll('companies')
    .select(['m.role as member_role', 'm.id as member_id'])
    .where('m.company_id', '=', companyId)
    .where((eb) =>
      eb.or([
        eb('m.customer_id', '=', customerId),
        eb.and([eb('m.customer_id', 'is', null), eb('m.email', '=', confirmedEmail(customerId))]),
      ]),
    )
    .orderBy('m.customer_id')
    .limit(1)
    .executeTakeFirst();
  if (!row) return null;
  const { member_role, member_id, ...company } = row;
  return { company, role: member_role, memberId: member_id };
}

/**
 * The companies the account acts for. Places added for its confirmed address are bound to it first, so that
 * the membership stays with the account if the address later changes.
 */
export async function companiesOf(ctx: CloudContext, customerId: number): Promise<Membership[]> {
  await ctx.db
    .updateTable('company_members')
    .set({ customer_id: customerId })
    .where('customer_id', 'is', null)
    .where('email', '=', confirmedEmail(customerId))
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('company_members as bound')
            .select('bound.id')
            .whereRef('bound.company_id', '=', 'company_members.company_id')
            .where('bound.customer_id', '=', customerId),
        ),
      ),
    )
    .execute();
  const rows = await ctx.db
    .selectFrom('company_members as m')
    .innerJoin('companies', 'companies.id', 'm.company_id')
    .selectAll('companies')
    .select(['m.role as member_role', 'm.id as member_id'])
    .where('m.customer_id', '=', customerId)
    .orderBy('companies.name')
    .execute();
  return rows.map(({ member_role, member_id, ...company }) => ({
    company,
    role: member_role,
    memberId: member_id,
  }));
}

/** A new company, `pending`, with the account that registered it as its owner, in one transaction. */
export async function registerCompany(
  ctx: CloudContext,
  by: ActingMember,
  input: { name: string; contactEmail: string; domain: string | null },
): Promise<Company> {
  const now = ctx.clock.now();
  const { customerId } = by;
  return ctx.db.transaction().execute(async (trx) => {
    const waiting = await trx
      .selectFrom('company_members as m')
      .innerJoin('companies', 'companies.id', 'm.company_id')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('m.customer_id', '=', customerId)
      .where('m.role', '=', 'owner')
      .where('companies.status', 'in', ['pending', 'rejected'])
      .executeTakeFirstOrThrow();
    if (Number(waiting.count) >= MAX_WAITING_COMPANIES) {
      throw new ApiError('conflict', {
        message: `You have ${MAX_WAITING_COMPANIES} companies waiting for an operator already; wait for their answer first.`,
      });
    }
    const company = await trx
      .insertInto('companies')
      .values({ name: input.name, contact_email: input.contactEmail, domain: input.domain, created_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
    await trx
      .insertInto('company_members')
      .values({
        company_id: company.id,
        customer_id: customerId,
        email: confirmedEmail(customerId),
        role: 'owner',
        added_at: now,
        added_by: customerId,
      })
      .execute();
    await recordMemberAction(trx, now, {
      companyId: company.id,
      by,
      name: 'registered',
      detail: company.name,
    });
    return company;
  });
}

export async function listMembers(ctx: CloudContext, companyId: number): Promise<Member[]> {
  const rows = await ctx.db
    .selectFrom('company_members as m')
    .leftJoin('customers', 'customers.id', 'm.customer_id')
    .select([
      'm.id',
      'm.email',
      'm.customer_id',
      'm.role',
      'm.added_at',
      'customers.display_name',
      'customers.email as account_email',
    ])
    .where('m.company_id', '=', companyId)
    .orderBy('m.role', 'desc')
    .orderBy('m.id')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    email: row.account_email ?? row.email,
    displayName: row.display_name,
    customerId: row.customer_id,
    role: row.role,
    addedAt: row.added_at,
  }));
}

/** A member as the record names them: the address of their account, or the one they were added by. */
function memberAddress(memberId: number) {
  return sql<string>`coalesce((select email from customers where id = company_members.customer_id), email, ${`member ${memberId}`})`.as(
    'address',
  );
}

/** A role as the record says it: `member` is a developer (docs/design.md section 11.1). */
function roleWord(role: MemberRole): string {
  return role === 'member' ? 'developer' : role;
}

/** The roles an owner gives: a developer (`member`) or a viewer; the owner's own passes only by transfer. */
export type GivenRole = Exclude<MemberRole, 'owner'>;

/** Adds a member by address with `role` (a developer unless said); adding one already there changes nothing. */
export async function addMember(
  ctx: CloudContext,
  input: { companyId: number; email: string; by: ActingMember; role?: GivenRole },
): Promise<{ added: boolean }> {
  const now = ctx.clock.now();
  const role = input.role ?? 'member';
  return ctx.db.transaction().execute(async (trx) => {
    const present = await trx
      .selectFrom('company_members as m')
      .leftJoin('customers', 'customers.id', 'm.customer_id')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .select((eb) =>
        eb.fn
          .countAll<number>()
          .filterWhere((w) => w.or([w('m.email', '=', input.email), w('customers.email', '=', input.email)]))
          .as('same'),
      )
      .where('m.company_id', '=', input.companyId)
      .executeTakeFirstOrThrow();
    if (Number(present.same) > 0) return { added: false };
    if (Number(present.count) >= MAX_MEMBERS) {
      throw new ApiError('conflict', { message: `A company has at most ${MAX_MEMBERS} members.` });
    }
    try {
      await trx
        .insertInto('company_members')
        .values({
          company_id: input.companyId,
          email: input.email,
          role,
          added_at: now,
          added_by: input.by.customerId,
        })
        .execute();
    } catch (error) {
      if (isUniqueViolation(error)) return { added: false };
      throw error;
    }
    const detail = `${input.email} as ${roleWord(role)}`;
    await recordMemberAction(trx, now, {
      companyId: input.companyId,
      by: input.by,
      name: 'member-added',
      detail,
    });
    return { added: true };
  });
}

/**
 * Removes a member. Their next page of the company's area answers 404: membership is looked up on every
 * request, so a removed member's session reaches nothing of the company from that moment. The owner stays.
 */
export async function removeMember(
  ctx: CloudContext,
  companyId: number,
  memberId: number,
  by: ActingMember,
): Promise<boolean> {
  return ctx.db.transaction().execute(async (trx) => {
    const removed = await trx
      .deleteFrom('company_members')
      .where('company_id', '=', companyId)
      .where('id', '=', memberId)
      .where('role', '<>', 'owner')
      .returning(memberAddress(memberId))
      .executeTakeFirst();
    if (!removed) return false;
    await recordMemberAction(trx, ctx.clock.now(), {
      companyId,
      by,
      name: 'member-removed',
      detail: removed.address,
    });
    return true;
  });
}

/** Makes a member other than the owner a developer or a viewer; false when the company has no such member. */
export async function setMemberRole(
  ctx: CloudContext,
  companyId: number,
  memberId: number,
  role: GivenRole,
  by: ActingMember,
): Promise<boolean> {
  return ctx.db.transaction().execute(async (trx) => {
    const changed = await trx
      .updateTable('company_members')
      .set({ role })
      .where('company_id', '=', companyId)
      .where('id', '=', memberId)
      .where('role', '<>', 'owner')
      .returning(memberAddress(memberId))
      .executeTakeFirst();
    if (!changed) return false;
    const detail = `${changed.address} a ${roleWord(role)}`;
    await recordMemberAction(trx, ctx.clock.now(), { companyId, by, name: 'member-role', detail });
    return true;
  });
}

/**
 * The owner hands the company to another member who has signed in: they become its owner and the former owner a
 * developer, in one transaction (a company has one owner, which an index holds). Says why not otherwise.
 */
export async function transferOwnership(
  ctx: CloudContext,
  input: { companyId: number; ownerMemberId: number; toMemberId: number; by: ActingMember },
): Promise<'transferred' | 'unknown' | 'not signed in'> {
  return ctx.db.transaction().execute(async (trx) => {
    const to = await trx
      .selectFrom('company_members')
      .select(['customer_id', 'role'])
      .where('company_id', '=', input.companyId)
      .where('id', '=', input.toMemberId)
      .forUpdate()
      .executeTakeFirst();
    if (!to || to.role === 'owner') return 'unknown';
    if (to.customer_id === null) return 'not signed in';
    const demoted = await trx
      .updateTable('company_members')
      .set({ role: 'member' })
      .where('company_id', '=', input.companyId)
      .where('id', '=', input.ownerMemberId)
      .where('role', '=', 'owner')
      .executeTakeFirst();
    if (Number(demoted.numUpdatedRows) === 0) return 'unknown';
    const owner = await trx
      .updateTable('company_members')
      .set({ role: 'owner' })
      .where('id', '=', input.toMemberId)
      .returning(memberAddress(input.toMemberId))
      .executeTakeFirstOrThrow();
    const at = ctx.clock.now();
    await recordMemberAction(trx, at, {
      companyId: input.companyId,
      by: input.by,
      name: 'owner-transferred',
      detail: owner.address,
    });
    return 'transferred';
  });
}
