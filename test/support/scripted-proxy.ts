import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A proxy on loopback in front of a cloud, for the company client's retry suites: it records every request that
 * reaches it and answers each as its script says (a status of its own, a dropped connection, the cloud's answer
 * lost on the way back), then forwards the rest. What a load balancer or a bad network does, on demand.
 */
export type Step =
  | 'forward'
  /** The connection is dropped before anything reaches the cloud. */
  | 'reset'
  /** The cloud gets the call and answers; the answer is lost (the connection is dropped). */
  | 'lose-answer'
  /** Nothing is answered, until the client gives up. */
  | 'hang'
  | { status: number; headers?: Record<string, string>; body?: string };

export interface Seen {
  headers: IncomingHttpHeaders;
  body: string;
  url: string;
}

export class ScriptedProxy {
  readonly seen: Seen[] = [];
  script: Step[] = [];
  /** Told of every answer the cloud gave to a forwarded call, once it is on its way back. */
  onAnswer: (seen: Seen, answer: { status: number; body: string }) => void = () => {};
  readonly #server: Server;
  #port = 0;

  constructor(readonly target: string) {
    this.#server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const seen: Seen = { headers: request.headers, body, url: request.url ?? '' };
        this.seen.push(seen);
        const step = this.script.shift() ?? 'forward';
        if (step === 'reset') {
          request.socket.destroy();
          return;
        }
        if (step === 'hang') return;
        if (typeof step === 'object') {
          response.writeHead(step.status, step.headers).end(step.body ?? '');
          return;
        }
        void this.#forward(request.url ?? '/', request.headers, body).then((answer) => {
          if (step === 'lose-answer') {
            request.socket.destroy();
            return;
          }
          response
            .writeHead(answer.status, answer.headers)
            .end(answer.body, () => this.onAnswer(seen, answer));
        });
      });
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.#port = (this.#server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #forward(url: string, incoming: IncomingHttpHeaders, body: string) {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(incoming)) {
      if (typeof value === 'string' && !['host', 'connection', 'content-length'].includes(name)) {
        headers[name] = value;
      }
    }
    const answer = await fetch(`${this.target}${url}`, { method: 'POST', headers, body });
    const kept: Record<string, string> = {};
    for (const name of ['content-type', 'x-request-id', 'retry-after']) {
      const value = answer.headers.get(name);
      if (value !== null) kept[name] = value;
    }
    return { status: answer.status, headers: kept, body: await answer.text() };
  }
}
