import fc from 'fast-check';
import type { SigningKey } from '../../shared/crypto/ed25519.js';
import { baseString } from '../../shared/crypto/request-signing.js';

/**
 * fast-check arbitraries for calls of the company API (cloud/README.md): bodies of every shape, credentials of
 * both modes (right, wrong and malformed), Idempotency-Key variants, content types, actions and methods; and
 * raw HTTP/1.1 requests, for what only a socket can send (request lines, header bytes, framing).
 */

/** What the cloud under test holds, so that generated calls can also be right and reach deep. */
export interface FuzzWorld {
  secret: { org_id: number; secret: string };
  /** An approved company of the other kind, whose keys are foreign to the secret company. */
  signer: { domain: string; key: SigningKey; org_id: number };
  /** A key that is not the signer's: a valid signature shape that does not verify. */
  wrongKey: SigningKey;
  codes: string[];
  keyRefs: number[];
  numberIds: number[];
}

/** One call as the generators describe it; `body` and `headers` are exactly what is sent. */
export interface FuzzCall {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: Buffer;
}

const ACTIONS = ['request', 'status', 'open'] as const;

/** JSON text of a value, including what JSON.stringify never writes (huge numbers, lone surrogates). */
function hostileJson(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
    fc.constantFrom(
      '1e400',
      '-1e400',
      '1e-400',
      '-0',
      '0.0',
      '1.0',
      '0.5',
      '9007199254740993',
      '123456789012345678901234567890',
      '2147483647',
      '2147483648',
      '-2147483649',
      '"\\ud800"',
      '"a\\udfffb"',
      '"\\u0000"',
      '"x\\u2028y"',
      '"\\u202eboB"',
      '"\\ufeff"',
      '""',
      '"   "',
      'true',
      'false',
      'null',
      '[]',
      '{}',
      '[1]',
      '{"id":1}',
    ),
    fc.string({ unit: 'binary', maxLength: 40 }).map((text) => JSON.stringify(text)),
    fc.string({ unit: 'binary-ascii', maxLength: 300 }).map((text) => JSON.stringify(text)),
    fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => `"a\\u${unit.toString(16)}b"`),
    fc.integer({ min: 1, max: 3000 }).map((depth) => `${'['.repeat(depth)}1${']'.repeat(depth)}`),
    fc.integer({ min: 1, max: 3000 }).map((depth) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`),
  );
}

/** A field's value: right for the world, or hostile; `weight` is how often it is right. */
function field(right: fc.Arbitrary<unknown>, weight = 3): fc.Arbitrary<string> {
  return fc.oneof(
    { weight, arbitrary: right.map((value) => JSON.stringify(value)) },
    { weight: 2, arbitrary: hostileJson() },
  );
}

function printableName(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom('Anna', 'Jürgen 🚪', 'علی\u200cاکبر', 'Anna, shift 2', 'x'.repeat(128), 'y'.repeat(129)),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }),
  );
}

/** `value` `odds` times as often as null, or for negative odds, null `-odds` times as often as `value`. */
function sometimes<T>(value: fc.Arbitrary<T>, odds: number): fc.Arbitrary<T | null> {
  const [present, absent] = odds >= 0 ? [odds, 1] : [1, -odds];
  return fc.oneof({ weight: absent, arbitrary: fc.constant(null) }, { weight: present, arbitrary: value });
}

/** The fields a body may hold, each present or not, and sometimes `__proto__` or a second `org_id`. */
function bodyFields(world: FuzzWorld): fc.Arbitrary<[string, string][]> {
  const id = (known: number[]) =>
    fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...known) }, fc.integer({ min: -3, max: 1e6 }));
  const entries: [string, fc.Arbitrary<string>, number][] = [
    ['code', field(fc.oneof(fc.constantFrom(...world.codes), fc.constantFrom('AAAAAAAAAAAA', 'abc'))), 1],
    ['ref', field(printableName()), 1],
    ['ttl_hours', field(fc.integer({ min: -5, max: 1000 })), 1],
    ['key_ref', field(id(world.keyRefs), 6), 6],
    ['number_id', field(id(world.numberIds), 6), 6],
    ['actor', field(printableName(), 6), 6],
    ['org_id', field(fc.constantFrom(world.signer.org_id, world.secret.org_id), 1), -5],
    ['__proto__', field(fc.constant({ org_id: world.secret.org_id, admin: true }), 1), -5],
    ['constructor', field(fc.constant({ prototype: { x: 1 } }), 1), -5],
    ['padding', padding(), -3],
  ];
  return fc
    .tuple(
      ...entries.map(([name, value, odds]) =>
        sometimes(
          value.map((text): [string, string] => [name, text]),
          odds,
        ),
      ),
    )
    .chain((chosen) => {
      const present = chosen.filter((entry) => entry !== null);
      // In any order: a permutation of the fields present.
      return fc.shuffledSubarray(present, { minLength: present.length });
    });
}

/** Mostly a little, sometimes around and over the 16 KiB limit. */
function padding(): fc.Arbitrary<string> {
  return fc
    .oneof({ weight: 4, arbitrary: fc.nat(300) }, fc.integer({ min: 16 * 1024 - 200, max: 17 * 1024 }))
    .map((size) => JSON.stringify('p'.repeat(size)));
}

/** Secret-mode credentials in the body: right, wrong, half, of the wrong type, or another company's. */
function secretCredentials(world: FuzzWorld): fc.Arbitrary<[string, string][]> {
  const { org_id, secret } = world.secret;
  return fc.oneof(
    fc.tuple(field(fc.constant(org_id)), field(fc.constant(secret))).map(([id, text]): [string, string][] => [
      ['org_id', id],
      ['secret', text],
    ]),
    fc.constant<[string, string][]>([
      ['org_id', String(org_id)],
      ['secret', JSON.stringify(`${secret}x`)],
    ]),
    fc.constant<[string, string][]>([['org_id', String(org_id)]]),
    fc.constant<[string, string][]>([['secret', JSON.stringify(secret)]]),
    fc.constant<[string, string][]>([
      ['org_id', String(world.signer.org_id)],
      ['secret', JSON.stringify(secret)],
    ]),
    fc.constant<[string, string][]>([]),
  );
}

/** A body as bytes: a JSON object of `credentials` and fields, other JSON, arbitrary bytes, or nothing. */
function body(world: FuzzWorld, credentials: [string, string][]): fc.Arbitrary<Buffer> {
  const object = bodyFields(world).map((fields) => {
    const entries = [...credentials, ...fields];
    return Buffer.from(`{${entries.map(([name, value]) => `${JSON.stringify(name)}:${value}`).join(',')}}`);
  });
  return fc.oneof(
    { weight: 25, arbitrary: object },
    fc.json({ maxDepth: 3 }).map((text) => Buffer.from(text)),
    fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
    object.map((bytes) =>
      Buffer.concat([bytes.subarray(0, -1), Buffer.from([0xff, 0xfe]), bytes.subarray(-1)]),
    ),
    fc
      .constantFrom('', ' ', '\ufeff{}', '{', '{"a":1}}', '{"a":1,}', "{'a':1}")
      .map((text) => Buffer.from(text)),
    fc
      .integer({ min: 16 * 1024 - 64, max: 40 * 1024 })
      .map((size) => Buffer.from(`{"p":"${'x'.repeat(size)}"}`)),
  );
}

/** How the call authenticates by headers: not at all, signed right, signed wrong, or malformed. */
type HeaderAuth =
  | { kind: 'none' }
  | { kind: 'signed'; key: 'right' | 'wrong'; ts: 'now' | 'stale' | 'future'; nonce: string; domain: string }
  | { kind: 'malformed'; headers: Record<string, string> };

/** Credentials of a call: in the body (secret mode), in headers (signature mode), or any mix of both. */
interface AuthPlan {
  body: [string, string][];
  headers: HeaderAuth;
}

function authPlan(world: FuzzWorld): fc.Arbitrary<AuthPlan> {
  const { org_id, secret } = world.secret;
  const rightSecret: AuthPlan = {
    body: [
      ['org_id', String(org_id)],
      ['secret', JSON.stringify(secret)],
    ],
    headers: { kind: 'none' },
  };
  const rightSigned = fc.stringMatching(/^[0-9a-f]{32}$/).map(
    (nonce): AuthPlan => ({
      body: [],
      headers: { kind: 'signed', key: 'right', ts: 'now', nonce, domain: world.signer.domain },
    }),
  );
  const anything = fc.record({ body: secretCredentials(world), headers: headerAuth(world) });
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant(rightSecret) },
    { weight: 3, arbitrary: rightSigned },
    { weight: 3, arbitrary: anything },
  );
}

function headerAuth(world: FuzzWorld): fc.Arbitrary<HeaderAuth> {
  const text = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 10 }));
  const signed = fc.record({
    kind: fc.constant('signed' as const),
    key: fc.constantFrom('right' as const, 'wrong' as const),
    ts: fc.constantFrom('now' as const, 'stale' as const, 'future' as const),
    nonce: fc.oneof(fc.stringMatching(/^[0-9a-f]{32}$/), fc.constant('0'.repeat(32))),
    domain: fc.constantFrom(world.signer.domain, world.signer.domain.toUpperCase(), 'unknown.example'),
  });
  const malformed = fc.record({
    kind: fc.constant('malformed' as const),
    headers: fc.record(
      { 'x-service-org': text, 'x-service-ts': text, 'x-service-nonce': text, 'x-service-sig': text },
      { requiredKeys: [] },
    ),
  });
  return fc.oneof({ weight: 2, arbitrary: fc.constant({ kind: 'none' as const }) }, signed, malformed);
}

function signatureHeaders(world: FuzzWorld, auth: HeaderAuth, payload: Buffer): Record<string, string> {
  if (auth.kind === 'none') return {};
  if (auth.kind === 'malformed') return auth.headers;
  const now = Math.floor(Date.now() / 1000);
  const ts = String({ now, stale: now - 301, future: now + 301 }[auth.ts]);
  const key = auth.key === 'right' ? world.signer.key : world.wrongKey;
  // Over the exact bytes sent, which need not be UTF-8.
  const message = new TextEncoder().encode(baseString(auth.domain, ts, auth.nonce, payload));
  return {
    'x-service-org': auth.domain,
    'x-service-ts': ts,
    'x-service-nonce': auth.nonce,
    'x-service-sig': Buffer.from(key.sign(message)).toString('base64'),
  };
}

function contentType(): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: 15, arbitrary: fc.constant('application/json') },
    fc.constantFrom(
      undefined,
      '',
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/json; charset=latin1',
      'application/json;',
      'application/jsonx',
      'application/json, text/plain',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/*',
      '*/*',
    ),
    fc.string({ maxLength: 30 }),
  );
}

function idempotencyKey(): fc.Arbitrary<string | undefined> {
  const visible = fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code));
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant(undefined) },
    fc.constantFrom('k1', 'k2', 'k3'),
    fc.string({ unit: visible, minLength: 1, maxLength: 255 }),
    fc.constantFrom('', ' ', 'a b', 'ä', 'x'.repeat(256), '\t'),
    fc.string({ maxLength: 20 }),
  );
}

/** The API's path, and near misses that must be unknown rather than a way in. */
function path(): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 20, arbitrary: fc.constant('/api/company.php') },
    fc.constantFrom(
      '/api/company.php/',
      '/API/company.php',
      '/api//company.php',
      '/api/company%2ephp',
      '/api/./company.php',
      '/api/../api/company.php',
      '/api/company.php%00',
      '/api/company.php;x',
      '/',
      '/ops/companies',
    ),
  );
}

function action(): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom(...ACTIONS).map((a) => `a=${a}`) },
    fc.constantFrom(
      '',
      'a=',
      'a=REQUEST',
      'a=request&a=status',
      'a[]=open',
      'a=open&b=1',
      'a=%6fpen',
      'a=open%00',
      'a=%ff',
      'a=%',
      'a=open;a=status',
      'a=+open',
    ),
    fc.string({ maxLength: 20 }).map((a) => `a=${encodeURIComponent(a)}`),
  );
}

function method(): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 15, arbitrary: fc.constant('POST') },
    fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE'),
  );
}

/** Other headers a client may send, with names and values a real client could put on the wire. */
function extraHeaders(): fc.Arbitrary<Record<string, string>> {
  const name = fc.constantFrom(
    'x-request-id',
    'accept',
    'user-agent',
    'x-forwarded-for',
    'content-encoding',
    'x-a',
  );
  const visible = fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code));
  const value = fc.string({ unit: visible, maxLength: 60 });
  return fc.dictionary(name, value, { maxKeys: 3 });
}

/** A call for `inject`: any method, action, headers and body. */
export function injectCall(world: FuzzWorld): fc.Arbitrary<FuzzCall> {
  return fc
    .record({
      method: method(),
      path: path(),
      query: action(),
      type: contentType(),
      idempotency: idempotencyKey(),
      auth: authPlan(world),
      extra: extraHeaders(),
    })
    .chain((plan) => body(world, plan.auth.body).map((bytes) => toCall(world, plan, bytes)));
}

function toCall(
  world: FuzzWorld,
  plan: {
    method: string;
    path: string;
    query: string;
    type: string | undefined;
    idempotency: string | undefined;
    auth: AuthPlan;
    extra: Record<string, string>;
  },
  payload: Buffer,
): FuzzCall {
  const call: FuzzCall = {
    method: plan.method,
    url: `${plan.path}?${plan.query}`,
    body: payload,
    headers: {
      ...plan.extra,
      ...(plan.type === undefined ? {} : { 'content-type': plan.type }),
      ...(plan.idempotency === undefined ? {} : { 'idempotency-key': plan.idempotency }),
      ...signatureHeaders(world, plan.auth.headers, payload),
    },
  };
  const shown = () => `${call.method} ${call.url} ${JSON.stringify(call.headers)} ${printable(call.body)}`;
  return Object.assign(call, { [fc.toStringMethod]: shown });
}

/**
 * An `open` that gets past authentication, names a key of the world and an object, so that it reaches the
 * key checks, the rate limit and the controller; its actor and Idempotency-Key vary.
 */
export function openCall(world: FuzzWorld): fc.Arbitrary<FuzzCall> {
  const actor = fc.oneof(
    { weight: 4, arbitrary: printableName().map((name) => JSON.stringify(name)) },
    hostileJson(),
  );
  return fc
    .record({
      auth: authPlan(world).filter((plan) => plan.headers.kind !== 'malformed'),
      key: fc.constantFrom(...world.keyRefs),
      number: fc.constantFrom(...world.numberIds),
      actor,
      idempotency: fc.oneof(
        { weight: 3, arbitrary: fc.constant(undefined) },
        fc.constantFrom('o1', 'o2', 'o3'),
      ),
    })
    .map((plan) => {
      const entries: [string, string][] = [
        ...plan.auth.body,
        ['key_ref', String(plan.key)],
        ['number_id', String(plan.number)],
        ['actor', plan.actor],
      ];
      const payload = Buffer.from(
        `{${entries.map(([name, value]) => `${JSON.stringify(name)}:${value}`).join(',')}}`,
      );
      return toCall(
        world,
        {
          method: 'POST',
          path: '/api/company.php',
          query: 'a=open',
          type: 'application/json',
          idempotency: plan.idempotency,
          auth: plan.auth,
          extra: {},
        },
        payload,
      );
    });
}

/** How a raw request frames its body. */
type Framing = 'length' | 'short' | 'long' | 'none' | 'chunked' | 'bad-chunk' | 'both';

/** A raw HTTP/1.1 request: the bytes of a call from `injectCall`, framed and mangled as only a socket can. */
export interface RawCall {
  bytes: Buffer;
  head: boolean;
  /** The client ends its side right after the bytes. */
  halfClose: boolean;
}

export function rawRequest(world: FuzzWorld): fc.Arbitrary<RawCall> {
  return fc
    .record({
      call: injectCall(world),
      framing: fc.oneof(
        { weight: 8, arbitrary: fc.constant<Framing>('length') },
        { weight: 2, arbitrary: fc.constant<Framing>('chunked') },
        fc.constantFrom<Framing>('short', 'long', 'none', 'bad-chunk', 'both'),
      ),
      line: requestLine(),
      host: fc.oneof(
        { weight: 8, arbitrary: fc.constant('Host: localhost') },
        fc.constantFrom('', 'Host: a\r\nHost: b', 'Host: '),
      ),
      mangle: fc.oneof(
        { weight: 3, arbitrary: fc.constant([]) },
        fc.array(mangledHeader(), { maxLength: 2 }),
      ),
      close: fc.constantFrom(true, true, true, false),
      twice: fc.oneof({ weight: 9, arbitrary: fc.constant(false) }, fc.constant(true)),
      halfClose: fc.oneof({ weight: 5, arbitrary: fc.constant(false) }, fc.constant(true)),
    })
    .map(({ call, framing, line, host, mangle, close, twice, halfClose }) => {
      const startLine = line(call.method, call.url);
      const headers = [
        ...(host ? [host] : []),
        ...Object.entries(call.headers).map(([name, value]) => `${name}: ${value}`),
        ...framingHeaders(framing, call.body),
        ...mangle,
        ...(close && !twice ? ['Connection: close'] : []),
      ];
      const head = Buffer.from(`${startLine}\r\n${headers.join('\r\n')}\r\n\r\n`, 'latin1');
      const once = Buffer.concat([head, framedBody(framing, call.body)]);
      // Twice: a pipelined second request, whose answer must come after the first one's.
      const bytes = twice ? Buffer.concat([once, once]) : once;
      const shown = () => `${halfClose ? 'then FIN: ' : ''}${printable(bytes)}`;
      return { bytes, head: startLine.startsWith('HEAD '), halfClose, [fc.toStringMethod]: shown };
    });
}

function requestLine(): fc.Arbitrary<(method: string, url: string) => string> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant((method: string, url: string) => `${method} ${url} HTTP/1.1`) },
    fc.constantFrom(
      (method: string, url: string) => `${method} ${url} HTTP/1.0`,
      (method: string, url: string) => `${method} ${url} HTTP/2.0`,
      (method: string, url: string) => `${method} ${url}`,
      (method: string, url: string) => `${method.toLowerCase()} ${url} HTTP/1.1`,
      (method: string, url: string) => `${method}  ${url} HTTP/1.1`,
      (method: string, url: string) => `${method} http://localhost${url} HTTP/1.1`,
      (method: string, url: string) => `${method} ${url.replace('company', 'c%zzompany')} HTTP/1.1`,
      (method: string, url: string) => `${method} ${url}#x HTTP/1.1`,
      (method: string) => `${method} * HTTP/1.1`,
      () => 'CONNECT localhost:443 HTTP/1.1',
      () => 'PRI * HTTP/2.0\r\n\r\nSM',
      (_method: string, url: string) => `PURGE ${url} HTTP/1.1`,
      (_method: string, url: string) => `PROPFIND ${url} HTTP/1.1`,
      (_method: string, url: string) => `FOO ${url} HTTP/1.1`,
      (method: string, url: string) => `${method} ${url.replace('?', '?\u0001')} HTTP/1.1`,
      (method: string, url: string) => `${method} ${url}${'x'.repeat(17 * 1024)} HTTP/1.1`,
    ),
    fc.string({ unit: 'binary-ascii', maxLength: 30 }).map((text) => () => text.replace(/\r\n/g, '')),
  );
}

/** A header line that Node's parser may refuse, or must take with care. */
function mangledHeader(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(
      'X-Note: a\u0001b',
      'X-Note: a\u007fb',
      'X-Note: caf\u00e9',
      'Bad Name: x',
      ': empty name',
      'X-Folded: a\r\n b',
      'Expect: 100-continue',
      'Expect: something-else',
      'Upgrade: websocket\r\nConnection: Upgrade',
      'Transfer-Encoding: gzip',
      'Transfer-Encoding: chunked, identity',
      'Content-Length: 1, 2',
      `X-Huge: ${'h'.repeat(17 * 1024)}`,
      'Content-Type: text/plain',
    ),
    fc.string({ unit: 'binary-ascii', maxLength: 40 }).map((text) => text.replace(/\r\n/g, '')),
    fc.uint8Array({ minLength: 1, maxLength: 20 }).map(
      (bytes) =>
        `X-Bytes: ${Buffer.from(bytes)
          .toString('latin1')
          .replace(/[\r\n]/g, '')}`,
    ),
  );
}

function framingHeaders(framing: Framing, payload: Buffer): string[] {
  switch (framing) {
    case 'length':
      return [`Content-Length: ${payload.length}`];
    case 'short':
      return [`Content-Length: ${payload.length + 10}`];
    case 'long':
      return [`Content-Length: ${Math.max(0, payload.length - 3)}`];
    case 'none':
      return [];
    case 'chunked':
    case 'bad-chunk':
      return ['Transfer-Encoding: chunked'];
    case 'both':
      return [`Content-Length: ${payload.length}`, 'Transfer-Encoding: chunked'];
  }
}

function framedBody(framing: Framing, payload: Buffer): Buffer {
  if (framing === 'chunked' || framing === 'both') return chunked(payload, 'ok');
  if (framing === 'bad-chunk') return chunked(payload, 'bad');
  return payload;
}

function chunked(payload: Buffer, kind: 'ok' | 'bad'): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; at < payload.length; at += 1000) {
    const piece = payload.subarray(at, at + 1000);
    const size = at === 0 ? `${piece.length.toString(16)};ext=1` : piece.length.toString(16).toUpperCase();
    parts.push(Buffer.from(`${size}\r\n`), piece, Buffer.from('\r\n'));
  }
  const end = kind === 'ok' ? '0\r\nX-Trailer: t\r\n\r\n' : `zz;${'e'.repeat(20_000)}\r\n\r\n`;
  return Buffer.concat([...parts, Buffer.from(end)]);
}

/** Bytes as a counterexample is best read: latin-1 text in JSON quotes, long runs cut short. */
function printable(bytes: Buffer): string {
  const text = bytes
    .toString('latin1')
    .replace(/(.{1,6}?)\1{20,}/gs, (run, unit: string) => `${unit}…×${run.length / unit.length}…`);
  return JSON.stringify(text.length > 4000 ? `${text.slice(0, 4000)}…` : text);
}
