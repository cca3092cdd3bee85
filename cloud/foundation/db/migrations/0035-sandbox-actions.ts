import { type Kysely, sql } from 'kysely';

/**
 * What a member does in the company's sandbox (docs/design.md sections 11.8 and 11.9) goes into the company's
 * own record, marked `sandbox`: a sandbox has no members of its own, and whoever reads the record should see
 * who granted a simulated request or pointed the sandbox's events somewhere. Added only, with a default: the
 * previous release writes its rows unmarked, which is what they are.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table member_actions add column sandbox boolean not null default false`.execute(db);
}
