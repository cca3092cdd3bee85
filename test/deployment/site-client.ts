import { request } from 'node:https';
import type { LookupFunction } from 'node:net';

/**
 * The test process's HTTPS client for a server in the lab: the server's name resolves to its address in the
 * lab (this process's /etc/hosts is the machine's), and only the given CA is trusted, as a company's or an
 * operator's client trusting the server's certificate would.
 */
export interface SiteAnswer {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
}

export interface SiteClient {
  send(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<SiteAnswer>;
  /** POST /api/company.php?a=<action> with a JSON body. */
  call(action: string, body: unknown): Promise<SiteAnswer>;
  /** The operator API, behind its bearer token. */
  ops(method: 'GET' | 'POST', path: string, body?: unknown): Promise<SiteAnswer>;
}

export function siteClient(options: {
  name: string;
  address: string;
  ca: string;
  operatorToken?: string;
}): SiteClient {
  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    if (hostname !== options.name) {
      callback(new Error(`${hostname} is not in the lab`) as NodeJS.ErrnoException, '', 4);
      return;
    }
    if (lookupOptions.all)
      (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [
        { address: options.address, family: 4 },
      ]);
    else callback(null, options.address, 4);
  };
  const send: SiteClient['send'] = (method, path, body, headers = {}) =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
      const outgoing = request(
        {
          host: options.name,
          port: 443,
          path,
          method,
          ca: options.ca,
          lookup,
          agent: false,
          headers: {
            ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
            ...headers,
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: Record<string, unknown>;
            try {
              parsed = JSON.parse(text) as Record<string, unknown>;
            } catch {
              parsed = { raw: text };
            }
            resolve({ status: response.statusCode ?? 0, body: parsed, headers: response.headers });
          });
        },
      );
      outgoing.setTimeout(15_000, () =>
        outgoing.destroy(new Error(`${method} ${path}: no answer within 15 s`)),
      );
      outgoing.on('error', reject);
      outgoing.end(payload);
    });
  return {
    send,
    call: (action, body) => send('POST', `/api/company.php?a=${action}`, body),
    ops: (method, path, body) =>
      send(method, path, body, { authorization: `Bearer ${options.operatorToken ?? ''}` }),
  };
}
