import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  keyExpired,
  ping,
  requestClaimed,
  requestDeclined,
  requestExpired,
  requestIssued,
  requestReleased,
  requestRevoked,
} from '../../cloud/rules/events/event-data.js';
import {
  EVENT_EXAMPLES,
  EVENT_KINDS,
  type EventKind,
  eventDataSchemas,
  eventSchema,
} from '../../shared/company-api/events.js';

/**
 * The events' one declaration (docs/design.md section 6), shared/company-api/events.ts, against what a company
 * reads and receives: cloud/README.md shows exactly its examples, one per kind, and the cloud's builders give
 * exactly the fields its schemas declare, no more and no fewer.
 */
const README = readFileSync(resolve(import.meta.dirname, '../../cloud/README.md'), 'utf8');

function readmeExamples(): unknown[] {
  const section = README.slice(README.indexOf('## Events at your callback address'));
  const block = /```json\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('no json example under "Events at your callback address"');
  return block
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as unknown);
}

/** The fields a schema declares, without the optional ones the value leaves out. */
function declaredFields(kind: EventKind, data: object): string[] {
  const shape = (eventDataSchemas[kind] as z.ZodObject).shape;
  return Object.keys(shape)
    .filter((field) => field in data || !shape[field]!.safeParse(undefined).success)
    .sort();
}

const request = { code: 'K7QX2M9TBV4D', ref: 'ORD-1', state: 'issued' as const };
const at = new Date('2026-05-04T10:15:02.345Z');
const built: [EventKind, object][] = [
  ['request.claimed', requestClaimed({ ...request, state: 'claimed' }, at)],
  ['request.issued', requestIssued(request, { id: 42, expiresAt: null, numbers: [] }, at)],
  [
    'request.issued',
    requestIssued(request, { id: 42, expiresAt: at, numbers: [{ number_id: 17, label: 'Main gate' }] }, at),
  ],
  ['request.revoked', requestRevoked({ ...request, state: 'revoked' }, 42, at)],
  ['request.expired', requestExpired({ code: request.code, ref: null, expires_at: at })],
  ['request.declined', requestDeclined({ code: request.code, ref: null }, at)],
  ['request.released', requestReleased({ code: request.code, ref: null }, at)],
  ['key.expired', keyExpired(request, { id: 42, expires_at: at })],
  ['ping', ping()],
];

describe('the event declarations', () => {
  it('are the examples cloud/README.md shows, one for every kind, in order', () => {
    expect(readmeExamples()).toEqual(EVENT_KINDS.map((kind) => EVENT_EXAMPLES[kind]));
  });

  it('accept their own examples, each by its kind only', () => {
    for (const kind of EVENT_KINDS) {
      expect(eventSchema(kind).safeParse(EVENT_EXAMPLES[kind]).success, kind).toBe(true);
      expect(declaredFields(kind, EVENT_EXAMPLES[kind].data)).toEqual(
        Object.keys(EVENT_EXAMPLES[kind].data).sort(),
      );
    }
    expect(eventSchema('open.gate_opened').safeParse(EVENT_EXAMPLES['open.gate_closed']).success).toBe(false);
  });

  it("are what the cloud's builders give, field for field, in the declared time forms", () => {
    for (const [kind, data] of built) {
      const parsed = eventDataSchemas[kind].safeParse(data);
      expect(parsed.success, `${kind}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
      expect(Object.keys(data).sort(), kind).toEqual(declaredFields(kind, data));
    }
    const stepTimes = eventDataSchemas['open.gate_opened'].shape.opened_at;
    expect(stepTimes.safeParse(at.toISOString()).success).toBe(true);
    expect(stepTimes.safeParse('2026-05-04 10:15:02').success).toBe(false);
  });
});
