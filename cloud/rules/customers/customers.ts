import type { CloudContext } from '../../foundation/context.js';

/** An account as the records of actions name it (docs/design.md sections 11.5 and 11.8): "Ann <ann@example.com>". */
export function accountLabel(displayName: string, email: string | null): string {
  return email ? `${displayName} <${email}>` : displayName;
}

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
