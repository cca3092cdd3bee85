import { describe, expect, expectTypeOf, it } from 'vitest';
import { webhookBody, webhookHeaders } from '../../cloud/rules/events/webhook-message.js';
import {
  type DeliveredEvent,
  type EventData,
  isEventOf,
  isKnownEvent,
  type UnknownWebhookEvent,
  verifyWebhook,
  type WebhookEvent,
  WebhookVerificationError,
} from '../../company/client/index.js';
import { EVENT_EXAMPLES, EVENT_KINDS } from '../../shared/company-api/events.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';

/**
 * The client's events as a company's program meets them (docs/design.md section 11.6; company/README.md): a
 * known kind checked with its schema and typed, so `switch (event.type)` gives each branch its `data`; a kind
 * newer than the client verified and passed on untyped; a known kind whose data is not that kind's refused.
 */
const serviceKey = SigningKey.generate();
const now = new Date('2026-05-04T11:05:03Z');

function delivery(event: { type: string; id: string; at: string; data: unknown }) {
  const body = webhookBody({ ...event, at: new Date(`${event.at.replace(' ', 'T')}Z`) });
  const headers = webhookHeaders(serviceKey, { id: event.id, timestamp: now.getTime() / 1000, body });
  return { headers, body, publicKey: serviceKey.publicKey, now };
}

describe("the client's typed events", () => {
  it('verifies every known kind as sent, and narrows it by type', () => {
    for (const kind of EVENT_KINDS) {
      const event = verifyWebhook(delivery(EVENT_EXAMPLES[kind]));
      expect(event).toEqual(EVENT_EXAMPLES[kind]);
      expect(isKnownEvent(event)).toBe(true);
      expect(isEventOf(event, kind)).toBe(true);
    }
  });

  it('passes a kind newer than the client, untyped, and keeps fields added later', () => {
    const newer = { type: 'gate.forced', id: 'f0e1d2c3', at: '2026-05-04 11:05:03', data: { anything: 1 } };
    const event = verifyWebhook(delivery(newer));
    expect(event).toEqual(newer);
    expect(isKnownEvent(event)).toBe(false);
    const grown = { ...EVENT_EXAMPLES.ping, data: { message: 'hi', added: true } };
    expect(verifyWebhook(delivery(grown)).data).toEqual({ message: 'hi', added: true });
  });

  it("refuses a known kind whose data is not that kind's, saying which field", () => {
    const wrong = { ...EVENT_EXAMPLES['gate.left_open'], data: { ...EVENT_EXAMPLES['gate.left_open'].data } };
    delete (wrong.data as Partial<typeof wrong.data>).limit_s;
    const refused = (() => {
      try {
        verifyWebhook(delivery(wrong));
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(WebhookVerificationError);
    expect((refused as WebhookVerificationError).message).toContain('gate.left_open');
    expect((refused as WebhookVerificationError).message).toContain('limit_s');
  });

  it('types each branch of a switch on event.type once the kind is known', () => {
    const event = verifyWebhook(delivery(EVENT_EXAMPLES['open.gate_opened']));
    expectTypeOf(event).toEqualTypeOf<DeliveredEvent>();
    if (!isKnownEvent(event)) {
      expectTypeOf(event).toEqualTypeOf<UnknownWebhookEvent>();
      return;
    }
    expectTypeOf(event).toEqualTypeOf<WebhookEvent>();
    switch (event.type) {
      case 'open.gate_opened':
        expectTypeOf(event.data).toEqualTypeOf<EventData['open.gate_opened']>();
        expectTypeOf(event.data.opened_at).toBeString();
        break;
      case 'gate.left_open':
        expectTypeOf(event.data.limit_s).toBeNumber();
        break;
      case 'open.failed':
        expectTypeOf(event.data.detail).toEqualTypeOf<string | undefined>();
        expectTypeOf(event.data.number_id).toEqualTypeOf<number | null>();
        break;
      default:
        expectTypeOf(event.type).toEqualTypeOf<
          Exclude<WebhookEvent['type'], 'open.gate_opened' | 'gate.left_open' | 'open.failed'>
        >();
    }
    if (isEventOf(event, 'request.issued'))
      expectTypeOf(event.data.key_expires_at).toEqualTypeOf<string | undefined>();
    if (isEventOf(event, 'request.declined')) {
      expectTypeOf(event.data.state).toEqualTypeOf<'declined'>();
      expectTypeOf(event.data.declined_at).toBeString();
    }
    expect(event.type).toBe('open.gate_opened');
  });
});
