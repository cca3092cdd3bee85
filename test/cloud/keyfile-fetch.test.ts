import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as net from 'node:net';
import { domainToASCII } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { fetchKeyFile } from '../../cloud/links/outbound-http/keyfile-fetch.js';
import type { Connector, ResolvedAddress } from '../../cloud/links/outbound-http/safe-connection.js';
import type { KeyFileResult } from '../../cloud/rules/domain-keys/key-file.js';

/*
 * Every test talks only to servers it starts on 127.0.0.1, port 0. Cases that need a name resolving to a public
 * address inject the resolver and a `connect` that stands in for the network, so no other address is dialled.
 */

/** The spec's vectors (test/vectors/request-signing.json): the key file and the keys that must be refused. */
const SPEC = JSON.parse(
  readFileSync(new URL('../vectors/request-signing.json', import.meta.url), 'utf8'),
) as {
  key_file: { key: string };
  keys_to_refuse: { name: string; key: string }[];
};
const VECTORS = { keyFile: SPEC.key_file, keysToRefuse: SPEC.keys_to_refuse };

/** A public address that no test ever dials: the fake network below answers it as unreachable. */
const PUBLIC = '93.184.215.14';

interface TestServer {
  port: number;
  /** `http://127.0.0.1:<port>/{domain}/.well-known/service.json` */
  template: string;
  /** Every HTTP request the server received. */
  requests: http.IncomingMessage[];
  /** Every TCP connection it accepted. */
  connections: number;
}

const servers: http.Server[] = [];

async function startServer(handler: http.RequestListener = () => {}): Promise<TestServer> {
  const server = http.createServer();
  const state: TestServer = { port: 0, template: '', requests: [], connections: 0 };
  server.on('connection', () => state.connections++);
  server.on('request', (req, res) => {
    state.requests.push(req);
    handler(req, res);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.address() as AddressInfo).port;
  state.template = `http://127.0.0.1:${state.port}/{domain}/.well-known/service.json`;
  return state;
}

/** A server answering every request with this status, headers and body. */
function serve(body: string, status = 200, headers: http.OutgoingHttpHeaders = {}): Promise<TestServer> {
  return startServer((_req, res) => {
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
    res.end(body);
  });
}

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A resolver that answers from a list, one answer per call, repeating the last; it counts its calls. */
function resolver(...answers: ResolvedAddress[][]) {
  const calls: string[] = [];
  const resolve = async (hostname: string) => {
    calls.push(hostname);
    return answers[Math.min(calls.length, answers.length) - 1] ?? [];
  };
  return { resolve, calls };
}

const v4 = (address: string): ResolvedAddress => ({ address, family: 4 });
const v6 = (address: string): ResolvedAddress => ({ address, family: 6 });

/**
 * Stands in for the network in production mode: asks the fetcher's `lookup` which address to dial, records it,
 * and connects to the local port routed for that address; any other address is unreachable, never dialled.
 */
function fakeNetwork(routes: Record<string, number> = {}) {
  const dialled: string[] = [];
  const connect: Connector = (options) => {
    const socket = new net.Socket();
    const dial = (address: string) => {
      dialled.push(address);
      const port = routes[address];
      if (port === undefined) {
        socket.destroy(Object.assign(new Error(`connect ENETUNREACH ${address}`), { code: 'ENETUNREACH' }));
      } else {
        socket.connect({ host: '127.0.0.1', port });
      }
    };
    const host = options.host ?? '';
    if (net.isIP(host)) {
      dial(host);
    } else {
      options.lookup?.(host, { all: false }, (error, address) => {
        if (error) socket.destroy(error);
        else dial(address as string);
      });
    }
    return socket;
  };
  return { connect, dialled };
}

function expectFailure(result: KeyFileResult, reason: string): string {
  expect(result).toMatchObject({ ok: false, reason });
  return result.ok ? '' : result.message;
}

describe('fetchKeyFile: the domain', () => {
  const refused: [label: string, domain: string][] = [
    ['IPv4 literal 127.0.0.1', '127.0.0.1'],
    ['private IPv4 literal 10.0.0.1', '10.0.0.1'],
    ['metadata service 169.254.169.254', '169.254.169.254'],
    ['IPv4-mapped literal [::ffff:127.0.0.1]', '[::ffff:127.0.0.1]'],
    ['IPv6 unspecified [::]', '[::]'],
    ['bare IPv6 ::1', '::1'],
    ['decimal 2130706433', '2130706433'],
    ['hexadecimal 0x7f.1', '0x7f.1'],
    ['short 127.1', '127.1'],
    ['octal 0177.0.0.1', '0177.0.0.1'],
    ['NAT64 literal 64:ff9b::7f00:1', '64:ff9b::7f00:1'],
    ['a numeric top-level label', 'acme.0x7f'],
    ['a single label', 'localhost'],
    ['empty', ''],
    ['a port', 'acme.example:443'],
    ['a path', 'acme.example/evil'],
    ['user info', 'user@acme.example'],
    ['an underscore', 'ac_me.example'],
    ['a leading hyphen', '-acme.example'],
    ['an empty label', 'acme..example'],
    ['a trailing dot', 'acme.example.'],
    ['a label of 64 characters', `${'a'.repeat(64)}.example`],
    ['a reserved ab-- label', 'ab--cd.example'],
    ['punycode that does not decode', 'xn--zzzz.example'],
    ['national characters', 'gärtner.example'],
  ];

  it.each(refused)('refuses %s before resolving anything', async (_label, domain) => {
    const dns = resolver([v4(PUBLIC)]);
    const network = fakeNetwork();
    const result = await fetchKeyFile(domain, { resolve: dns.resolve, connect: network.connect });
    expectFailure(result, 'invalid_domain');
    expect(dns.calls).toEqual([]);
    expect(network.dialled).toEqual([]);
  });

  it('names the punycode form when given national characters', async () => {
    const message = expectFailure(await fetchKeyFile('gärtner.example'), 'invalid_domain');
    expect(message).toContain('xn--grtner-bua.example');
  });
});

describe('[attack:keyfile.private-address] fetchKeyFile: only public addresses (production mode)', () => {
  const nonPublicAnswers: [label: string, answer: ResolvedAddress][] = [
    ['127.0.0.1', v4('127.0.0.1')],
    ['10.x', v4('10.1.2.3')],
    ['169.254.169.254', v4('169.254.169.254')],
    ['::ffff:127.0.0.1', v6('::ffff:127.0.0.1')],
    ['::', v6('::')],
    ['::1', v6('::1')],
    ['64:ff9b::7f00:1', v6('64:ff9b::7f00:1')],
    ['fd00::1', v6('fd00::1')],
    ['100.64.0.1', v4('100.64.0.1')],
  ];

  it.each(nonPublicAnswers)('refuses a name resolving to %s and dials nothing', async (_label, answer) => {
    const dns = resolver([answer]);
    const network = fakeNetwork();
    const result = await fetchKeyFile('acme.example', { resolve: dns.resolve, connect: network.connect });
    const message = expectFailure(result, 'not_public');
    expect(message).toContain(`acme.example resolves to ${answer.address}`);
    expect(network.dialled).toEqual([]);
  });

  it('refuses a name resolving to loopback where a local server listens, which receives nothing', async () => {
    const server = await serve(JSON.stringify(VECTORS.keyFile));
    const dns = resolver([v4('127.0.0.1')]);
    const network = fakeNetwork({ '127.0.0.1': server.port });
    const result = await fetchKeyFile('acme.example', { resolve: dns.resolve, connect: network.connect });
    expectFailure(result, 'not_public');
    expect(network.dialled).toEqual([]);
    expect(server.connections).toBe(0);
  });

  it('dials only the public address of a name that also resolves to loopback', async () => {
    const server = await serve(JSON.stringify(VECTORS.keyFile));
    const dns = resolver([v4('127.0.0.1'), v4(PUBLIC)]);
    const network = fakeNetwork({ '127.0.0.1': server.port });
    const result = await fetchKeyFile('acme.example', { resolve: dns.resolve, connect: network.connect });
    expectFailure(result, 'unreachable');
    expect(network.dialled).toEqual([PUBLIC]);
    expect(server.connections).toBe(0);
  });

  it('DNS rebinding: an answer that turns to loopback after the check is never used', async () => {
    const server = await serve(JSON.stringify(VECTORS.keyFile));
    const dns = resolver([v4(PUBLIC)], [v4('127.0.0.1')]);
    const network = fakeNetwork({ '127.0.0.1': server.port });
    const result = await fetchKeyFile('rebind.example', { resolve: dns.resolve, connect: network.connect });
    expect(result.ok).toBe(false);
    expect(network.dialled).not.toContain('127.0.0.1');
    expect(dns.calls).toEqual(['rebind.example']);
    expect(server.requests).toHaveLength(0);
    expect(server.connections).toBe(0);
  });

  it('refuses a connection that lands on loopback although the name resolved publicly', async () => {
    // The network routes the public address to a local server: the check on the connected socket catches it.
    const server = await serve(JSON.stringify(VECTORS.keyFile));
    const dns = resolver([v4(PUBLIC)]);
    const network = fakeNetwork({ [PUBLIC]: server.port });
    const result = await fetchKeyFile('acme.example', { resolve: dns.resolve, connect: network.connect });
    const message = expectFailure(result, 'not_public');
    expect(message).toContain('the connection reached 127.0.0.1 (loopback)');
    expect(network.dialled).toEqual([PUBLIC]);
    expect(server.requests).toHaveLength(0);
  });

  it("refuses a name resolving to loopback with node's own connect, before any connection", async () => {
    const server = await serve(JSON.stringify(VECTORS.keyFile));
    const dns = resolver([v4('127.0.0.1'), v6('::1')]);
    const result = await fetchKeyFile('acme.example', { resolve: dns.resolve });
    expectFailure(result, 'not_public');
    expect(server.connections).toBe(0);
  });

  it('names the readable domain, with the punycode beside a label that mixes scripts', async () => {
    const dns = resolver([v4('10.0.0.1')]);
    const network = fakeNetwork();
    const options = { resolve: dns.resolve, connect: network.connect };
    const plain = expectFailure(await fetchKeyFile('xn--grtner-bua.example', options), 'not_public');
    expect(plain).toBe(
      'gärtner.example resolves to 10.0.0.1 (private 10.0.0.0/8), not a public address; ' +
        'the key file must be served publicly',
    );
    const lookalike = domainToASCII('p\u0430ypal.example'); // a Cyrillic "а" among Latin letters
    const mixed = expectFailure(await fetchKeyFile(lookalike, options), 'not_public');
    expect(mixed).toContain(`p\u0430ypal.example (${lookalike}) resolves to 10.0.0.1`);
  });

  it('says so when the name has no address', async () => {
    const dns = resolver([]);
    const network = fakeNetwork();
    const result = await fetchKeyFile('gone.example', { resolve: dns.resolve, connect: network.connect });
    expect(expectFailure(result, 'unreachable')).toContain('no address');
    expect(network.dialled).toEqual([]);
  });
});

describe('[attack:keyfile.redirect] fetchKeyFile: redirects', () => {
  it('refuses a redirect to another host, without contacting it', async () => {
    const other = await serve(JSON.stringify(VECTORS.keyFile));
    const server = await serve('', 302, {
      Location: `http://localhost:${other.port}/.well-known/service.json`,
    });
    const result = await fetchKeyFile('acme.example', { devUrlTemplate: server.template });
    expect(expectFailure(result, 'bad_redirect')).toContain('another host');
    expect(other.connections).toBe(0);
  });

  it('refuses a redirect to another port on the same address', async () => {
    const other = await serve(JSON.stringify(VECTORS.keyFile));
    const server = await serve('', 301, { Location: `http://127.0.0.1:${other.port}/` });
    expectFailure(await fetchKeyFile('acme.example', { devUrlTemplate: server.template }), 'bad_redirect');
    expect(other.connections).toBe(0);
  });

  const privateTargets: [label: string, location: string][] = [
    ['10.0.0.1', 'http://10.0.0.1/.well-known/service.json'],
    ['the metadata service', 'http://169.254.169.254/latest/meta-data/'],
    ['[::ffff:127.0.0.1]', 'http://[::ffff:127.0.0.1]/'],
    ['2130706433', 'http://2130706433/'],
  ];

  it.each(privateTargets)('refuses a redirect to %s before connecting', async (_label, location) => {
    const server = await serve('', 302, { Location: location });
    const dialled: string[] = [];
    const connect: Connector = (options) => {
      dialled.push(options.host ?? '');
      return net.connect(options);
    };
    const result = await fetchKeyFile('acme.example', { devUrlTemplate: server.template, connect });
    expectFailure(result, 'bad_redirect');
    expect(dialled).toEqual(['127.0.0.1']);
  });

  it('follows a redirect to another path on the same host', async () => {
    const server = await startServer((req, res) => {
      if (req.url === '/moved/service.json') {
        res.end(JSON.stringify(VECTORS.keyFile));
      } else {
        res.writeHead(307, { Location: '/moved/service.json' }).end();
      }
    });
    const result = await fetchKeyFile('acme.example', { devUrlTemplate: server.template });
    expect(result.ok).toBe(true);
    expect(server.requests.map((req) => req.url)).toEqual([
      '/acme.example/.well-known/service.json',
      '/moved/service.json',
    ]);
  });

  it('follows up to maxRedirects redirects and refuses one more', async () => {
    const chain = (limit: number) =>
      startServer((req, res) => {
        const hop = Number(req.url?.split('/hop/')[1] ?? 0);
        if (hop < limit) res.writeHead(302, { Location: `/hop/${hop + 1}` }).end();
        else res.end(JSON.stringify(VECTORS.keyFile));
      });
    const three = await chain(3);
    expect((await fetchKeyFile('acme.example', { devUrlTemplate: three.template })).ok).toBe(true);
    const four = await chain(4);
    const message = expectFailure(
      await fetchKeyFile('acme.example', { devUrlTemplate: four.template }),
      'bad_redirect',
    );
    expect(message).toContain('more than 3');
    expect(four.requests).toHaveLength(4);
  });

  it('refuses a redirect without a Location', async () => {
    const server = await serve('', 302);
    expectFailure(await fetchKeyFile('acme.example', { devUrlTemplate: server.template }), 'bad_redirect');
  });
});

describe('[attack:keyfile.oversized-or-slow] fetchKeyFile: size and time limits', () => {
  it('refuses a key file announced larger than 4 KiB', async () => {
    const server = await serve(JSON.stringify({ key: VECTORS.keyFile.key, pad: 'x'.repeat(5000) }));
    const result = await fetchKeyFile('xn--grtner-bua.example', { devUrlTemplate: server.template });
    expect(expectFailure(result, 'too_large')).toBe("gärtner.example's key file is larger than 4 KiB");
  });

  it('refuses a chunked key file once more than 4 KiB arrive, without waiting for the end', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(`{"key":"${VECTORS.keyFile.key}","pad":"`);
      res.write('x'.repeat(5000));
      // never ends
    });
    const result = await fetchKeyFile('acme.example', { devUrlTemplate: server.template, timeoutMs: 10_000 });
    expect(expectFailure(result, 'too_large')).toContain('larger than 4 KiB');
  });

  it('honours a smaller maxBytes', async () => {
    const server = await serve(JSON.stringify(VECTORS.keyFile));
    const result = await fetchKeyFile('acme.example', { devUrlTemplate: server.template, maxBytes: 20 });
    expect(expectFailure(result, 'too_large')).toContain('larger than 20 bytes');
  });

  it('gives up on a key file whose body never finishes', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"key":');
    });
    const result = await fetchKeyFile('acme.example', { devUrlTemplate: server.template, timeoutMs: 200 });
    expect(expectFailure(result, 'timeout')).toContain('did not arrive within 200 ms');
  });

  it('gives up on a server that never answers', async () => {
    const server = await startServer();
    const result = await fetchKeyFile('acme.example', { devUrlTemplate: server.template, timeoutMs: 200 });
    expectFailure(result, 'timeout');
    expect(server.requests).toHaveLength(1);
  });

  it('gives up on a body that trickles in: the deadline covers the whole fetch', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      const drip = setInterval(() => res.write(' '), 20);
      res.on('close', () => clearInterval(drip));
    });
    const result = await fetchKeyFile('acme.example', { devUrlTemplate: server.template, timeoutMs: 200 });
    expectFailure(result, 'timeout');
  });

  it('gives up on a resolver that never answers', async () => {
    const network = fakeNetwork();
    const result = await fetchKeyFile('acme.example', {
      resolve: () => new Promise<ResolvedAddress[]>(() => {}),
      connect: network.connect,
      timeoutMs: 200,
    });
    expectFailure(result, 'timeout');
    expect(network.dialled).toEqual([]);
  });
});

describe('fetchKeyFile: the answer', () => {
  it('refuses a status other than 200', async () => {
    const server = await serve('not here', 404);
    const message = expectFailure(
      await fetchKeyFile('acme.example', { devUrlTemplate: server.template }),
      'bad_status',
    );
    expect(message).toContain('HTTP 404');
  });

  it('reports a closed port as unreachable', async () => {
    const server = await startServer();
    const template = server.template;
    for (const open of servers.splice(0)) await new Promise((resolve) => open.close(resolve));
    const message = expectFailure(
      await fetchKeyFile('acme.example', { devUrlTemplate: template }),
      'unreachable',
    );
    expect(message).toContain('refused');
  });

  const badJson: [label: string, body: string | Uint8Array][] = [
    ['not JSON', 'key=abc'],
    ['an HTML page', '<html><body>Not found</body></html>'],
    ['truncated JSON', '{"key": "PUAX'],
    ['an array', JSON.stringify([VECTORS.keyFile])],
    ['a string', JSON.stringify(VECTORS.keyFile.key)],
    ['null', 'null'],
    ['invalid UTF-8', Buffer.from([0x7b, 0xff, 0x7d])],
  ];

  it.each(badJson)('refuses a key file that is %s', async (_label, body) => {
    const server = await startServer((_req, res) => res.end(body));
    expectFailure(await fetchKeyFile('acme.example', { devUrlTemplate: server.template }), 'invalid_json');
  });

  const missingKey: [label: string, body: unknown][] = [
    ['no key field', {}],
    ['a key of another name', { public_key: VECTORS.keyFile.key }],
    ['a key that is a number', { key: 42 }],
    ['a key that is null', { key: null }],
  ];

  it.each(missingKey)('refuses a key file with %s', async (_label, body) => {
    const server = await serve(JSON.stringify(body));
    const message = expectFailure(
      await fetchKeyFile('acme.example', { devUrlTemplate: server.template }),
      'invalid_key',
    );
    expect(message).toContain('no "key"');
  });

  it.each(VECTORS.keysToRefuse)('refuses the key "$name"', async ({ key }) => {
    const server = await serve(JSON.stringify({ key }));
    const message = expectFailure(
      await fetchKeyFile('acme.example', { devUrlTemplate: server.template }),
      'invalid_key',
    );
    expect(message).toContain("acme.example's key file holds an unusable key");
  });

  it('refuses a key that is not base64', async () => {
    const server = await serve(JSON.stringify({ key: 'not base64!' }));
    expectFailure(await fetchKeyFile('acme.example', { devUrlTemplate: server.template }), 'invalid_key');
  });
});

describe('fetchKeyFile: the happy path', () => {
  it("returns the vector's key, served through the development template", async () => {
    const server = await serve(JSON.stringify(VECTORS.keyFile));
    const result = await fetchKeyFile('xn--grtner-bua.example', { devUrlTemplate: server.template });
    expect(result.ok).toBe(true);
    expect(result.ok && result.key.base64).toBe(VECTORS.keyFile.key);
    const [req] = server.requests;
    expect(req?.method).toBe('GET');
    expect(req?.url).toBe('/xn--grtner-bua.example/.well-known/service.json');
    expect(req?.headers.accept).toBe('application/json');
    expect(req?.headers['user-agent']).toBe('Gatelink-KeyFetch/1');
    expect(req?.headers.cookie).toBeUndefined();
  });

  it('resolves a host name in the template through the resolver, without the public-address check', async () => {
    const server = await serve(JSON.stringify(VECTORS.keyFile));
    const dns = resolver([v4('127.0.0.1')]);
    const result = await fetchKeyFile('acme.example', {
      devUrlTemplate: `http://keys.test:${server.port}/{domain}/.well-known/service.json`,
      resolve: dns.resolve,
    });
    expect(result.ok).toBe(true);
    expect(dns.calls).toEqual(['keys.test']);
    expect(server.requests[0]?.headers.host).toBe(`keys.test:${server.port}`);
  });

  it('accepts the domain in upper case and asks for it in lower case', async () => {
    const server = await serve(JSON.stringify(VECTORS.keyFile));
    expect((await fetchKeyFile('ACME.Example', { devUrlTemplate: server.template })).ok).toBe(true);
    expect(server.requests[0]?.url).toBe('/acme.example/.well-known/service.json');
  });

  it('ignores proxies named in the environment', async () => {
    const proxy = await startServer((_req, res) => res.writeHead(502).end());
    const server = await serve(JSON.stringify(VECTORS.keyFile));
    const saved = { http: process.env.HTTP_PROXY, https: process.env.HTTPS_PROXY };
    process.env.HTTP_PROXY = `http://127.0.0.1:${proxy.port}`;
    process.env.HTTPS_PROXY = `http://127.0.0.1:${proxy.port}`;
    try {
      expect((await fetchKeyFile('acme.example', { devUrlTemplate: server.template })).ok).toBe(true);
    } finally {
      for (const [name, value] of [
        ['HTTP_PROXY', saved.http],
        ['HTTPS_PROXY', saved.https],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
    expect(proxy.connections).toBe(0);
  });
});

describe('fetchKeyFile: options', () => {
  it('refuses a development template that is not an http URL', async () => {
    await expect(
      fetchKeyFile('acme.example', { devUrlTemplate: 'ftp://127.0.0.1/{domain}' }),
    ).rejects.toThrow(TypeError);
  });

  it('refuses a non-positive timeout', async () => {
    await expect(fetchKeyFile('acme.example', { timeoutMs: 0 })).rejects.toThrow(RangeError);
  });
});
