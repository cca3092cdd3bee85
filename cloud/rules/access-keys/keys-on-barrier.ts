import type { Database } from '../../foundation/db/database.js';
import { type CompanyDisplay, companyDisplay } from '../companies/display.js';
import { type KeyShapeColumns, keyShapeOfRow } from '../grant-shapes/key-shapes.js';
import { openingsUsed } from '../grant-shapes/openings-used.js';
import type { KeyShape } from '../grant-shapes/stored-shape.js';
import { standingOf } from '../households/barrier-roles.js';
import { type AccessKeyLapse, accessKeyLapse, accessKeyStillValid } from './key-lifetime.js';

/**
 * The keys a customer sees on a barrier (docs/design.md section 10.4): every key not withdrawn, with the company
 * it was given to, the objects in it and its lifetime; a key past its end is listed as ended until the
 * customer withdraws it, since its company's `status` still says `issued`. Every query names the barrier's
 * owner, under whom its household's keys are kept (docs/design.md section 9.2): the caller has checked that the
 * reader may look at the barrier, so nobody reads another household's keys.
 */
export interface KeyOnBarrier {
  keyRef: number;
  company: CompanyDisplay;
  objects: { numberId: number; label: string; removed: boolean }[];
  issuedAt: Date;
  /** null: until the customer withdraws it. */
  expiresAt: Date | null;
  /** Its end has passed: `open` answers 403 `expired`. */
  expired: boolean;
  revokedAt: Date | null;
  /** Its shape (docs/design.md section 3.1), its end among it, and the barrier's zone its hours are read in. */
  shape: KeyShape;
  timeZone: string;
  /** Openings spent so far, when its shape counts them; null otherwise. */
  openingsUsed: number | null;
  /** "Ask me before each opening" (docs/design.md section 10.8): how long an `open` waits; null: it does not ask. */
  askFirstS: number | null;
}

export async function keysOnBarrier(
  db: Database,
  input: { ownerId: number; deviceId: string; now: Date },
): Promise<KeyOnBarrier[]> {
  const rows = await keyRows(db, input.now)
    .where('keys.customer_id', '=', input.ownerId)
    .where('keys.device_id', '=', input.deviceId)
    .where('keys.revoked_at', 'is', null)
    .orderBy('keys.issued_at', 'desc')
    .orderBy('keys.id', 'desc')
    .execute();
  return withObjects(db, rows);
}

/** One key on the owner's barrier, withdrawn or not; null when it is not the household's or not on that barrier. */
export async function keyOnBarrier(
  db: Database,
  input: { ownerId: number; deviceId: string; keyRef: number; now: Date },
): Promise<KeyOnBarrier | null> {
  const row = await keyRows(db, input.now)
    .where('keys.id', '=', input.keyRef)
    .where('keys.customer_id', '=', input.ownerId)
    .where('keys.device_id', '=', input.deviceId)
    .executeTakeFirst();
  if (!row) return null;
  const [key] = await withObjects(db, [row]);
  return key ?? null;
}

/**
 * The key granted on a request the customer holds, with the barrier it opens; null when there is none. The
 * barrier is named only while the customer may still look at it (docs/design.md section 9.2): one that has since
 * passed to another customer, or whose household they left, is not, since its name is no longer theirs to read.
 */
export async function keyOfRequest(
  db: Database,
  input: { customerId: number; requestId: number; now: Date },
): Promise<(KeyOnBarrier & { barrier: { id: string; name: string } | null }) | null> {
  const row = await keyRows(db, input.now)
    .innerJoin('requests', 'requests.id', 'keys.request_id')
    .innerJoin('devices', 'devices.id', 'keys.device_id')
    .select(['devices.id as device_id', 'devices.name as device_name', 'devices.label as device_label'])
    .where('requests.customer_id', '=', input.customerId)
    .where('keys.request_id', '=', input.requestId)
    .executeTakeFirst();
  if (!row) return null;
  const [key] = await withObjects(db, [row]);
  const standing = await standingOf(db, { customerId: input.customerId, deviceId: row.device_id });
  return {
    ...key!,
    barrier: standing ? { id: row.device_id, name: row.device_name ?? row.device_label } : null,
  };
}

/**
 * How many companies can open each of the given barriers now: its household's keys (kept under its owner)
 * neither withdrawn nor past their end, one count per company.
 */
export async function companiesWithAccess(
  db: Database,
  input: { deviceIds: string[]; now: Date },
): Promise<Map<string, number>> {
  if (input.deviceIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('keys')
    .innerJoin('devices', 'devices.id', 'keys.device_id')
    .select((eb) => ['keys.device_id', eb.fn.count<string>('keys.company_id').distinct().as('companies')])
    .whereRef('keys.customer_id', '=', 'devices.customer_id')
    .where('keys.device_id', 'in', input.deviceIds)
    .where(accessKeyStillValid(input.now))
    .groupBy('keys.device_id')
    .execute();
  return new Map(rows.map((row) => [row.device_id, Number(row.companies)]));
}

function keyRows(db: Database, now: Date) {
  return db
    .selectFrom('keys')
    .innerJoin('companies', 'companies.id', 'keys.company_id')
    .innerJoin('devices as key_device', 'key_device.id', 'keys.device_id')
    .select([
      'keys.id',
      'keys.issued_at',
      'keys.expires_at',
      'keys.revoked_at',
      'keys.starts_at',
      'keys.windows',
      'keys.openings_allowed',
      'keys.ask_first_s',
      'key_device.time_zone',
      accessKeyLapse(now).as('lapse'),
      'companies.id as company_id',
      'companies.name as company_name',
      'companies.domain as company_domain',
      'companies.key_pub as company_key_pub',
      'companies.logo_hash as company_logo_hash',
    ]);
}

interface KeyRow extends KeyShapeColumns {
  id: number;
  issued_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
  time_zone: string;
  ask_first_s: number | null;
  lapse: AccessKeyLapse | null;
  company_id: number;
  company_name: string;
  company_domain: string | null;
  company_key_pub: string | null;
  company_logo_hash: string | null;
}

async function withObjects(db: Database, rows: KeyRow[]): Promise<KeyOnBarrier[]> {
  if (rows.length === 0) return [];
  const objects = await db
    .selectFrom('key_objects')
    .innerJoin('device_objects', 'device_objects.id', 'key_objects.object_id')
    .select(['key_objects.key_id', 'device_objects.id', 'device_objects.label', 'device_objects.removed_at'])
    .where(
      'key_objects.key_id',
      'in',
      rows.map((row) => row.id),
    )
    .orderBy('device_objects.id')
    .execute();
  const used = await openingsUsed(
    db,
    rows.filter((row) => row.openings_allowed !== null).map((row) => row.id),
  );
  return rows.map((row) => ({
    keyRef: row.id,
    company: companyDisplay({
      id: row.company_id,
      name: row.company_name,
      domain: row.company_domain,
      key_pub: row.company_key_pub,
      logo_hash: row.company_logo_hash,
    }),
    objects: objects
      .filter((object) => object.key_id === row.id)
      .map((object) => ({ numberId: object.id, label: object.label, removed: object.removed_at !== null })),
    issuedAt: row.issued_at,
    expiresAt: row.expires_at,
    expired: row.lapse === 'expired',
    revokedAt: row.revoked_at,
    shape: keyShapeOfRow(row),
    timeZone: row.time_zone,
    openingsUsed: used.get(row.id) ?? null,
    askFirstS: row.ask_first_s,
  }));
}
