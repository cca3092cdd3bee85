import {
  createDecipheriv,
  createECDH,
  createHmac,
  createPublicKey,
  type ECDH,
  randomBytes,
  verify,
} from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A push service as a browser's vendor runs one, on loopback, for the Web Push suites (docs/design.md section
 * 10.6). It hands out subscriptions the way a browser makes them (an ECDH P-256 key pair and a 16-byte auth
 * secret kept here), and for every push it checks the VAPID JWT (RFC 8292: ES256, audience its own origin, an
 * expiry within 24 hours, `k=` the cloud's public key) and decrypts the `aes128gcm` payload (RFC 8291) with the
 * subscription's own keys, written here from the RFC with node:crypto rather than with the sender's library.
 * What it answers is the test's to choose: 201 by default, 410 for a subscription it forgot, 500, or a hang.
 */
export interface BrowserSubscription {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

export interface ReceivedPush {
  /** The path's subscription id. */
  subscription: string;
  /** The decrypted payload, parsed; null when it could not be decrypted. */
  payload: Record<string, unknown> | null;
  /** Why the push was refused, when it was: a bad JWT, a wrong key, an undecryptable body. */
  problem: string | null;
  headers: IncomingMessage['headers'];
  claims: Record<string, unknown> | null;
}

interface Held {
  ecdh: ECDH;
  auth: Buffer;
}

export class TestPushService {
  readonly received: ReceivedPush[] = [];
  /**
   * The status for each push; 201 unless the test says otherwise. `'hang'` never answers; `{ status, delayMs }`
   * answers after a while, as a busy push service does, so that a test can catch pushes in flight.
   */
  answer: (push: ReceivedPush) => number | 'hang' | { status: number; delayMs: number } = () => 201;
  readonly #held = new Map<string, Held>();
  readonly #server: Server;
  #origin = '';
  #vapidKey = '';
  #count = 0;

  constructor() {
    this.#server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const push = this.#read(request, Buffer.concat(chunks));
        this.received.push(push);
        const status = push.problem ? 403 : this.answer(push);
        if (status === 'hang') return;
        if (typeof status === 'number') response.writeHead(status).end();
        else setTimeout(() => response.writeHead(status.status).end(), status.delayMs);
      });
    });
  }

  /** Listens on loopback and checks every JWT against `vapidPublicKey` (base64url, uncompressed point). */
  async start(vapidPublicKey: string): Promise<void> {
    this.#vapidKey = vapidPublicKey;
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.#origin = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** A new subscription, as `PushSubscription.toJSON()` gives it. */
  subscribe(): BrowserSubscription {
    const id = `s${++this.#count}-${randomBytes(6).toString('hex')}`;
    const ecdh = createECDH('prime256v1');
    ecdh.generateKeys();
    const auth = randomBytes(16);
    this.#held.set(id, { ecdh, auth });
    return {
      endpoint: `${this.#origin}/push/${id}`,
      keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: auth.toString('base64url') },
    };
  }

  /** The pushes that reached a subscription and decrypted, their payloads. */
  payloadsFor(subscription: BrowserSubscription): Record<string, unknown>[] {
    const id = subscription.endpoint.split('/').pop();
    return this.received
      .filter((push) => push.subscription === id && push.payload !== null)
      .map((push) => push.payload!);
  }

  #read(request: IncomingMessage, body: Buffer): ReceivedPush {
    const subscription = (request.url ?? '').split('/').pop() ?? '';
    const push: ReceivedPush = {
      subscription,
      payload: null,
      problem: null,
      headers: request.headers,
      claims: null,
    };
    try {
      push.claims = this.#checkVapid(request.headers.authorization ?? '');
      const held = this.#held.get(subscription);
      if (!held) throw new Error('no such subscription');
      if (request.headers['content-encoding'] !== 'aes128gcm') throw new Error('not aes128gcm');
      push.payload = JSON.parse(decryptAes128gcm(body, held).toString('utf8'));
    } catch (error) {
      push.problem = error instanceof Error ? error.message : String(error);
    }
    return push;
  }

  /** RFC 8292: `vapid t=<JWT>, k=<key>`, the JWT ES256-signed by that key for this origin, not expired. */
  #checkVapid(header: string): Record<string, unknown> {
    const match = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(header);
    if (!match) throw new Error(`not a VAPID authorization: ${header.slice(0, 40)}`);
    const [, jwt, k] = match as unknown as [string, string, string];
    if (k !== this.#vapidKey) throw new Error('k= is not the cloud key');
    const [head, claims, signature] = jwt.split('.') as [string, string, string];
    const header0 = JSON.parse(Buffer.from(head, 'base64url').toString('utf8')) as { alg?: string };
    if (header0.alg !== 'ES256') throw new Error(`alg ${header0.alg}`);
    const point = Buffer.from(k, 'base64url');
    const key = createPublicKey({
      key: {
        kty: 'EC',
        crv: 'P-256',
        x: point.subarray(1, 33).toString('base64url'),
        y: point.subarray(33, 65).toString('base64url'),
      },
      format: 'jwk',
    });
    const signed = verify(
      'sha256',
      Buffer.from(`${head}.${claims}`),
      { key, dsaEncoding: 'ieee-p1363' },
      Buffer.from(signature, 'base64url'),
    );
    if (!signed) throw new Error('the JWT signature does not verify');
    const body = JSON.parse(Buffer.from(claims, 'base64url').toString('utf8')) as Record<string, unknown>;
    if (body.aud !== this.#origin) throw new Error(`aud ${String(body.aud)} is not ${this.#origin}`);
    const now = Math.floor(Date.now() / 1000);
    if (typeof body.exp !== 'number' || body.exp <= now || body.exp > now + 24 * 3600) {
      throw new Error(`exp ${String(body.exp)} out of range`);
    }
    if (typeof body.sub !== 'string' || !/^(mailto:|https:)/.test(body.sub)) throw new Error('no sub');
    return body;
  }
}

/** RFC 8291 section 3 and RFC 8188: one record, the sender's key in its header. */
function decryptAes128gcm(body: Buffer, held: Held): Buffer {
  const salt = body.subarray(0, 16);
  const idLength = body[20]!;
  const senderKey = body.subarray(21, 21 + idLength);
  const record = body.subarray(21 + idLength);
  const hmac = (key: Buffer, data: Buffer) => createHmac('sha256', key).update(data).digest();
  const shared = held.ecdh.computeSecret(senderKey);
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), held.ecdh.getPublicKey(), senderKey]);
  const ikm = hmac(hmac(held.auth, shared), Buffer.concat([keyInfo, Buffer.from([1])]));
  const prk = hmac(salt, ikm);
  const cek = hmac(prk, Buffer.from('Content-Encoding: aes128gcm\0\x01')).subarray(0, 16);
  const nonce = hmac(prk, Buffer.from('Content-Encoding: nonce\0\x01')).subarray(0, 12);
  const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
  decipher.setAuthTag(record.subarray(record.length - 16));
  const padded = Buffer.concat([decipher.update(record.subarray(0, record.length - 16)), decipher.final()]);
  // The last record ends with the delimiter 2, then zeros of padding.
  let end = padded.length - 1;
  while (end >= 0 && padded[end] === 0) end -= 1;
  if (padded[end] !== 2) throw new Error('no last-record delimiter');
  return padded.subarray(0, end);
}
