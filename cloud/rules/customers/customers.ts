import type { CloudContext } from '../../foundation/context.js';

export async function createCustomer(
  ctx: CloudContext,
  input: { displayName: string; email?: string | undefined },
): Promise<{ id: number; display_name: string }> {
  return ctx.db
    .insertInto('customers')
    .values({ display_name: input.displayName, email: input.email ?? null, created_at: ctx.clock.now() })
    .returning(['id', 'display_name'])
    .executeTakeFirstOrThrow();
}
