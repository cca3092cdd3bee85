import type { Selectable, Transaction } from 'kysely';
import { isCode, normalizeCode, randomCode } from '../../../shared/codes.js';
import type { GrantShape } from '../../../shared/company-api/grant-shape.js';
import { keyNumber } from '../../../shared/company-api/key-numbers.js';
import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import type { Database } from '../../foundation/db/database.js';
import type { DB, RequestState, RequestsTable } from '../../foundation/db/schema.js';
import { formatTimestamp } from '../../foundation/http/timestamps.js';
import { isShaped, type KeyShapeColumns, keyShapeOfRow } from '../grant-shapes/key-shapes.js';
import { openingsUsed } from '../grant-shapes/openings-used.js';
import { grantShapeOf } from '../grant-shapes/stored-shape.js';

export type AccessRequest = Selectable<RequestsTable>;

/** 12 Crockford characters: 60 bits from the cryptographic source, a bearer secret for claiming. */
export const REQUEST_CODE_LENGTH = 12;

/**
 * The state a reader must see: a request still `new` or `claimed` after its lifetime is `expired`,
 * whether or not the sweep has recorded that yet. A request that ended before, `declined` among them, keeps
 * the state it ended in.
 */
export function effectiveState(
  request: Pick<AccessRequest, 'state' | 'expires_at'>,
  now: Date,
): RequestState {
  if ((request.state === 'new' || request.state === 'claimed') && request.expires_at <= now) return 'expired';
  return request.state;
}

export async function createRequest(
  trx: Transaction<DB>,
  input: {
    companyId: number;
    ref: string | undefined;
    ttlHours: number;
    now: Date;
    /** What the company asks for (docs/design.md section 3.1), validated; the customer grants it or less. */
    proposedShape?: GrantShape | null;
  },
): Promise<AccessRequest> {
  const expiresAt = new Date(input.now.getTime() + input.ttlHours * 3600 * 1000);
  // A collision among 2^60 codes is unlikely but not impossible; draw again rather than fail.
  for (;;) {
    const inserted = await trx
      .insertInto('requests')
      .values({
        code: randomCode(REQUEST_CODE_LENGTH),
        company_id: input.companyId,
        ref: input.ref ?? null,
        ttl_hours: input.ttlHours,
        proposed_shape: input.proposedShape ? JSON.stringify(input.proposedShape) : null,
        created_at: input.now,
        expires_at: expiresAt,
      })
      .onConflict((oc) => oc.column('code').doNothing())
      .returningAll()
      .executeTakeFirst();
    if (inserted) return inserted;
  }
}

/** Finds a request by code as a person may type it; null for a code that cannot exist. */
export async function findRequestByCode(db: Database, text: string): Promise<AccessRequest | null> {
  const code = normalizeCode(text);
  if (!isCode(code, REQUEST_CODE_LENGTH)) return null;
  return (await db.selectFrom('requests').selectAll().where('code', '=', code).executeTakeFirst()) ?? null;
}

/** Finds the request by code; the caller then locks its row inside its transaction. */
export async function requestIdByCode(ctx: CloudContext, code: string): Promise<number> {
  const found = await findRequestByCode(ctx.db, code);
  if (!found) throw new ApiError('not_found', { message: 'No request with this code.' });
  return found.id;
}

export function lockRequest(trx: Transaction<DB>, id: number): Promise<AccessRequest> {
  return trx.selectFrom('requests').selectAll().where('id', '=', id).forUpdate().executeTakeFirstOrThrow();
}

/**
 * The `status` answer (docs/design.md section 3): a field appears once it has a value. Another company's
 * code answers exactly like an unknown one.
 */
export async function requestStatus(db: Database, companyId: number, codeText: string, now: Date) {
  const request = await findRequestByCode(db, codeText);
  if (!request || request.company_id !== companyId) throw new ApiError('not_found');
  const status: Record<string, unknown> = {
    code: request.code,
    state: effectiveState(request, now),
    expires_at: formatTimestamp(request.expires_at),
  };
  if (request.ref !== null) status.ref = request.ref;
  if (request.claimed_at) status.claimed_at = formatTimestamp(request.claimed_at);
  if (request.issued_at) {
    const key = await db
      .selectFrom('keys')
      .innerJoin('devices', 'devices.id', 'keys.device_id')
      .select([
        'keys.id',
        'keys.expires_at',
        'keys.revoked_at',
        'keys.starts_at',
        'keys.windows',
        'keys.openings_allowed',
        'keys.ask_first_s',
        'devices.time_zone',
      ])
      .where('keys.request_id', '=', request.id)
      .executeTakeFirstOrThrow();
    const numbers = await db
      .selectFrom('key_objects')
      .innerJoin('device_objects', 'device_objects.id', 'key_objects.object_id')
      .select(['device_objects.id', 'device_objects.label', 'device_objects.kind'])
      .where('key_objects.key_id', '=', key.id)
      .orderBy('device_objects.id')
      .execute();
    status.key_ref = key.id;
    status.issued_at = formatTimestamp(request.issued_at);
    status.numbers = numbers.map(keyNumber);
    if (key.expires_at) status.key_expires_at = formatTimestamp(key.expires_at);
    if (key.ask_first_s !== null) status.ask_first_s = key.ask_first_s;
    Object.assign(status, await shapeFields(db, key));
  }
  if (request.revoked_at) status.revoked_at = formatTimestamp(request.revoked_at);
  if (request.declined_at) status.declined_at = formatTimestamp(request.declined_at);
  return status;
}

/** `status`'s fields of a key's shape (docs/design.md section 3.1): the shape, its zone, the openings spent. */
async function shapeFields(
  db: Database,
  key: KeyShapeColumns & { id: number; time_zone: string },
): Promise<Record<string, unknown>> {
  const shape = keyShapeOfRow(key);
  if (!isShaped(shape)) return {};
  const fields: Record<string, unknown> = { shape: grantShapeOf(shape), time_zone: key.time_zone };
  if (shape.openings !== null) fields.openings_used = (await openingsUsed(db, [key.id])).get(key.id) ?? 0;
  return fields;
}
