import { createPublicKey, type KeyObject, verify } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';

/**
 * A company's callback endpoint on loopback, for the event delivery's suites (docs/design.md section 6). It checks
 * every delivery with code that is not the cloud's: node:crypto's Ed25519 (OpenSSL) over the Standard Webhooks
 * signed content `<webhook-id>.<webhook-timestamp>.<body>`, with the key the cloud publishes at
 * `/.well-known/service.json`. It answers as a test tells it to (a status, a delay, no answer at all), and
 * records every request, and any event that arrived while the same event was still being received.
 */

export interface Received {
  id: string;
  timestamp: number;
  signature: string;
  /** The signature verified with the published key. */
  verified: boolean;
  body: string;
  event: { type: string; id: string; at: string; data: Record<string, unknown> };
  headers: IncomingMessage['headers'];
}

/** What to answer a delivery: a status (with headers and a body) after an optional delay, or nothing (`hang`). */
export type Answer =
  | { status: number; delayMs?: number; headers?: Record<string, string>; body?: string }
  | 'hang';

const bodySchema = z.object({
  type: z.string(),
  id: z.string(),
  at: z.string(),
  data: z.record(z.string(), z.unknown()),
});

export class WebhookReceiver {
  readonly received: Received[] = [];
  /** Events that came again while the same event was still being received. */
  readonly concurrentDuplicates: string[] = [];
  answer: (event: Received) => Answer = () => ({ status: 204 });
  readonly #inFlight = new Map<string, number>();
  readonly #hanging = new Set<ServerResponse>();
  readonly #server: Server;
  #key: KeyObject | null = null;
  #port = 0;

  constructor() {
    this.#server = createServer((request, response) => void this.#handle(request, response));
  }

  /** Listens, checking signatures with the base64 key of a `/.well-known/service.json`. */
  async start(publishedKey: string): Promise<void> {
    this.#key = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publishedKey, 'base64').toString('base64url') },
      format: 'jwk',
    });
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.#port = (this.#server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}/hooks/gatelink`;
  }

  get port(): number {
    return this.#port;
  }

  /** Distinct events received, by id, in the order they first arrived. */
  events(): Received['event'][] {
    const seen = new Map<string, Received['event']>();
    for (const item of this.received) if (!seen.has(item.id)) seen.set(item.id, item.event);
    return [...seen.values()];
  }

  async stop(): Promise<void> {
    for (const response of this.#hanging) response.destroy();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const id = String(request.headers['webhook-id'] ?? '');
    const timestamp = Number(request.headers['webhook-timestamp']);
    const signature = String(request.headers['webhook-signature'] ?? '');
    const item: Received = {
      id,
      timestamp,
      signature,
      verified: this.#verify(id, timestamp, body, signature),
      body,
      event: bodySchema.parse(JSON.parse(body)),
      headers: request.headers,
    };
    const inFlight = this.#inFlight.get(id) ?? 0;
    if (inFlight > 0) this.concurrentDuplicates.push(id);
    this.#inFlight.set(id, inFlight + 1);
    this.received.push(item);
    const answer = this.answer(item);
    try {
      if (answer === 'hang') {
        this.#hanging.add(response);
        response.on('close', () => this.#hanging.delete(response));
        return;
      }
      if (answer.delayMs) await sleep(answer.delayMs);
      response.writeHead(answer.status, answer.headers).end(answer.body);
    } finally {
      if (answer === 'hang') {
        response.on('close', () => this.#leave(id));
      } else {
        this.#leave(id);
      }
    }
  }

  #leave(id: string): void {
    this.#inFlight.set(id, (this.#inFlight.get(id) ?? 1) - 1);
  }

  /** Standard Webhooks: `v1a,<base64 Ed25519 signature>` over `<id>.<timestamp>.<body>`, checked by OpenSSL. */
  #verify(id: string, timestamp: number, body: string, header: string): boolean {
    if (!this.#key) return false;
    return header.split(' ').some((part) => {
      const [version, value] = part.split(',');
      if (version !== 'v1a' || !value) return false;
      return verify(
        null,
        Buffer.from(`${id}.${timestamp}.${body}`),
        this.#key!,
        Buffer.from(value, 'base64'),
      );
    });
  }
}
