import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Serves `/<domain>/.well-known/service.json` on loopback for the cloud's GATELINK_DEV_KEYFILE_URL switch.
 * Tests publish, change or withdraw a company's key file here.
 */
export class KeyFileServer {
  readonly #files = new Map<string, string>();
  readonly #server: Server;
  #port = 0;

  constructor() {
    this.#server = createServer((request, response) => {
      const match = /^\/([^/]+)\/\.well-known\/service\.json$/.exec(request.url ?? '');
      const body = match ? this.#files.get(match[1]!) : undefined;
      if (body === undefined) {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.#port = (this.#server.address() as AddressInfo).port;
  }

  /** The template for GATELINK_DEV_KEYFILE_URL. */
  get template(): string {
    return `http://127.0.0.1:${this.#port}/{domain}/.well-known/service.json`;
  }

  publish(domain: string, key: string): void {
    this.#files.set(domain, JSON.stringify({ key }));
  }

  publishRaw(domain: string, body: string): void {
    this.#files.set(domain, body);
  }

  withdraw(domain: string): void {
    this.#files.delete(domain);
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
