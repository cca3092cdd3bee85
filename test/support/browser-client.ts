import type { FastifyInstance } from 'fastify';
import { startSession } from '../../cloud/foundation/web/sessions.js';
import type { TestCloud } from './cloud.js';

/**
 * A browser without a browser, for the customer application's suites that need no script: a cookie jar over
 * Fastify's inject, the CSRF token read from the last page, forms posted as a browser posts them. The real
 * browser suite (test/e2e/customer-story.test.ts) drives Chromium.
 */
export interface PageAnswer {
  status: number;
  html: string;
  headers: Record<string, string | string[] | number | undefined>;
  /** Where a redirect points, if it is one. */
  location: string | undefined;
}

export class BrowserClient {
  readonly #app: FastifyInstance;
  readonly #cookies = new Map<string, string>();
  #csrf = '';

  constructor(app: FastifyInstance) {
    this.#app = app;
  }

  /** A client already signed in as `customerId` (a session made directly, as signing in would make it). */
  static async signedIn(cloud: TestCloud, customerId: number): Promise<BrowserClient> {
    const client = new BrowserClient(cloud.app);
    client.setCookie('gatelink-session', await startSession(cloud.ctx, customerId));
    return client;
  }

  setCookie(name: string, value: string): void {
    this.#cookies.set(name, value);
  }

  cookie(name: string): string | undefined {
    return this.#cookies.get(name);
  }

  /** The CSRF token of the last page this client loaded. */
  get csrfToken(): string {
    return this.#csrf;
  }

  get(url: string, headers: Record<string, string> = {}): Promise<PageAnswer> {
    return this.#send('GET', url, undefined, { accept: 'text/html', ...headers });
  }

  /** Posts a form as a browser does, with the CSRF token of the last page unless `_csrf` is given. */
  post(url: string, fields: Record<string, string | string[]> = {}, headers: Record<string, string> = {}) {
    const form = new URLSearchParams();
    if (!('_csrf' in fields)) form.append('_csrf', this.#csrf);
    for (const [name, value] of Object.entries(fields)) {
      for (const one of Array.isArray(value) ? value : [value]) form.append(name, one);
    }
    return this.#send('POST', url, form.toString(), {
      accept: 'text/html',
      'content-type': 'application/x-www-form-urlencoded',
      ...headers,
    });
  }

  /** Posts JSON as the pages' scripts do, with the CSRF token in its header. */
  postJson(url: string, body: unknown, headers: Record<string, string> = {}) {
    return this.#send('POST', url, JSON.stringify(body), {
      accept: 'application/json',
      'content-type': 'application/json',
      'x-csrf-token': this.#csrf,
      ...headers,
    });
  }

  async #send(
    method: 'GET' | 'POST',
    url: string,
    payload: string | undefined,
    headers: Record<string, string>,
  ): Promise<PageAnswer> {
    const cookie = [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await this.#app.inject({
      method,
      url,
      headers: { ...(cookie ? { cookie } : {}), ...headers },
      ...(payload === undefined ? {} : { payload }),
    });
    for (const set of response.cookies) {
      if (set.value === '' || (set.maxAge !== undefined && set.maxAge <= 0)) this.#cookies.delete(set.name);
      else this.#cookies.set(set.name, set.value);
    }
    const token = /name="_csrf" value="([^"]+)"/.exec(response.body);
    if (token) this.#csrf = token[1]!;
    const location = response.headers.location;
    return {
      status: response.statusCode,
      html: response.body,
      headers: response.headers,
      location: typeof location === 'string' ? location : undefined,
    };
  }
}

/** The visible text of a page, tags removed and entities of the escaper undone, for asserting what a person reads. */
export function visibleText(html: string): string {
  return html
    .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}
