import { type RawBuilder, sql } from 'kysely';
import { REFUSED_OUTCOMES } from './choices.js';

/**
 * The two rules of which entries a person of a barrier's household is told (docs/design.md sections 10.6 and
 * 10.7), as SQL over the aliases a query gives its tables, so that the fan-out
 * (cloud/rules/push-notifications/recipients.ts) and the daily digest
 * (cloud/rules/mail-notifications/digest-entries.ts) cannot drift apart.
 */

/**
 * The entry's key was granted within the barrier's household: a controller that changed hands keeps its
 * earlier owner's keys and journal to that owner (section 10.5), and tells the new household nothing of them.
 */
export function keyOfHousehold(alias: { key: string; device: string }): RawBuilder<boolean> {
  const keyOwner = sql.ref(`${alias.key}.customer_id`);
  return sql<boolean>`(${keyOwner} = ${sql.ref(`${alias.device}.customer_id`)}
    or exists (select 1 from barrier_members g
                where g.device_id = ${sql.ref(`${alias.device}.id`)} and g.customer_id = ${keyOwner}))`;
}

/**
 * What the person chose lets the entry through: every opening when they never chose, only the refusals the
 * cloud decided (REFUSED_OUTCOMES), or nothing.
 */
export function toldUnderChoice(alias: { choice: string; entry: string }): RawBuilder<boolean> {
  const tell = sql.ref(`${alias.choice}.tell`);
  const refused = sql.join(REFUSED_OUTCOMES.map((outcome) => sql.lit(outcome)));
  return sql<boolean>`(${tell} is null or ${tell} = 'every'
    or (${tell} = 'refused' and ${sql.ref(`${alias.entry}.outcome`)} in (${refused})))`;
}
