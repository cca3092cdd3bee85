import type { NoticeKind } from '../../foundation/db/schema.js';

/**
 * What a notification other than an opening's carries to the browser (docs/design.md section 10.7), encrypted to
 * the subscription's keys like every payload: its words, ready to show, the moment it is about, the page a tap
 * opens, and its tag, one per subject, so that a notice sent twice, or "closed again" after "left open",
 * replaces the one before on the phone. Never a code, a key, a secret or a link that signs anyone in.
 */
export interface AlertPayload {
  kind: Exclude<NoticeKind, 'opening'>;
  /**
   * On a `question`, set when it asks to call the gate rather than Allow or Deny (docs/design.md section 10.9):
   * the service worker then offers the page, where the call is placed, in place of the two buttons.
   */
  asks?: 'call';
  tag: string;
  title: string;
  body: string;
  /** ISO 8601 in UTC, the notification's timestamp. */
  at: string;
  url: string;
}

/** Who a notification goes to, as far as its words need: the cloud's address and the account's zone. */
export interface PushReader {
  baseUrl: string;
  zone: string;
}

/** The barrier's page, where its gates and its key history are. */
export function barrierPage(baseUrl: string, deviceId: string): string {
  return `${baseUrl}/barriers/${encodeURIComponent(deviceId)}`;
}
