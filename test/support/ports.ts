import { createConnection, createServer } from 'node:net';

/** A TCP port on 127.0.0.1 that nothing listens on now, for a server that must keep its port across restarts. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  await new Promise((done) => server.close(done));
  if (!address || typeof address === 'string') throw new Error('no free port');
  return address.port;
}

/** Whether a server on 127.0.0.1 accepts connections on `port` now: how a started broker is known to listen. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}
