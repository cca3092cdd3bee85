import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The connections a server holds that Node's own timeouts do not reach (docs/design.md section 8): Node times a
 * connection's headers only from its first byte, so one that never sends a byte is kept forever, and a closing
 * server waits for it. A hostile client could hold any number of them, and a stop would never finish.
 *
 * So a connection that has sent nothing within `silentMs` is closed, and `dropSilentSoon()`, called as the server
 * closes, ends those that have sent nothing a second later; one whose call has begun is served, as a closing server serves
 * it (app.ts), and one between calls is closed by Node.
 */
export interface ConnectionWatch {
  /**
   * Ends, a moment from now, the connections that have still sent nothing: a closing server does not wait for
   * them. The moment lets a call whose first bytes are on their way be read, and then served.
   */
  dropSilentSoon(): void;
}

/** How long a closing server still waits for a silent connection's first byte. */
const CLOSE_GRACE_MS = 1_000;

export function watchConnections(server: Server, silentMs: number): ConnectionWatch {
  const busy = new WeakSet<Socket>();
  const open = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    // Node sets its own socket timeout only for a keep-alive connection between requests; until the first
    // request this one is ours, and `request` below turns it off, so a long answer (a stream) is never cut.
    socket.setTimeout(silentMs, () => {
      if (silent(socket)) socket.destroy();
    });
  });
  server.on('request', (request, response) => {
    const socket = request.socket;
    busy.add(socket);
    socket.setTimeout(0);
    response.once('close', () => busy.delete(socket));
  });
  /** Sent nothing yet: a connection whose call has begun (a byte of it read) is Node's to time and serve. */
  const silent = (socket: Socket) => !busy.has(socket) && socket.bytesRead === 0;
  return {
    dropSilentSoon() {
      setTimeout(() => {
        for (const socket of open) if (silent(socket)) socket.destroy();
      }, CLOSE_GRACE_MS).unref();
    },
  };
}
