import { connect, type Socket } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * MQTT spoken byte by byte over a plain socket, as an attacker does: packets no client library would send, and
 * from another address than the devices'. On Linux every address of 127.0.0.0/8 is loopback, so a socket bound
 * to this one reaches a broker on 127.0.0.1 and the broker sees it come from elsewhere.
 */
export const ATTACKER_ADDRESS = '127.0.0.2';

export interface RawConnection {
  socket: Socket;
  /** Resolves when the broker ended the connection (or it failed): end, error or close, whichever is first. */
  ended: Promise<void>;
  /** Whether `ended` has resolved. */
  readonly isEnded: boolean;
}

export async function openRaw(port: number, localAddress?: string): Promise<RawConnection> {
  const socket = connect({ host: '127.0.0.1', port, ...(localAddress ? { localAddress } : {}) });
  let isEnded = false;
  const ended = new Promise<void>((resolve) => {
    const end = () => {
      isEnded = true;
      resolve();
    };
    socket.once('end', end);
    socket.once('close', end);
    socket.once('error', end);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return {
    socket,
    ended,
    get isEnded() {
      return isEnded;
    },
  };
}

/** A packet's fixed header: its first byte, then `remaining` as a Remaining Length (MQTT 3.1.1 section 2.2.3). */
export function fixedHeader(first: number, remaining: number): Buffer {
  const bytes = [first];
  let left = remaining;
  do {
    const digit = left % 128;
    left = Math.floor(left / 128);
    bytes.push(left > 0 ? digit | 0x80 : digit);
  } while (left > 0);
  return Buffer.from(bytes);
}

export const CONNECT = 0x10;

export interface Login {
  clientId: string;
  username: string;
  password: string;
}

/** A CONNECT of MQTT 3.1.1 (section 3.1) with a clean session, keep-alive 30 s, user name and password. */
export function connectPacket(login: Login): Buffer {
  const text = (value: string) => {
    const bytes = Buffer.from(value, 'utf8');
    const length = Buffer.alloc(2);
    length.writeUInt16BE(bytes.length);
    return Buffer.concat([length, bytes]);
  };
  // Protocol name, level 4, flags (user name, password, clean session), keep-alive.
  const variable = Buffer.concat([text('MQTT'), Buffer.from([4, 0b1100_0010, 0, 30])]);
  const payload = Buffer.concat([text(login.clientId), text(login.username), text(login.password)]);
  return Buffer.concat([fixedHeader(CONNECT, variable.length + payload.length), variable, payload]);
}

export interface Streamed {
  /** Bytes the socket took (their write succeeded) before the connection ended or `upTo` was reached. */
  written: number;
  ended: boolean;
}

/**
 * Writes `first`, then `chunkBytes` at a time, letting the event loop turn after each write (the broker may run
 * in this process), until the connection ends or `upTo` bytes are written.
 */
export async function streamUntilEnded(
  connection: RawConnection,
  first: Buffer,
  options: { upTo: number; chunkBytes: number },
): Promise<Streamed> {
  const chunk = Buffer.alloc(options.chunkBytes, 0x41);
  let written = 0;
  let next = first;
  while (!connection.isEnded && written < options.upTo) {
    const ok = await new Promise<boolean>((resolve) =>
      connection.socket.write(next, (error) => resolve(!error)),
    );
    if (!ok) break;
    written += next.length;
    next = chunk;
    await nextTurn();
  }
  connection.socket.destroy();
  return { written, ended: connection.isEnded };
}

/** Sends a CONNECT and resolves with the CONNACK's return code, or 'closed' when none came before the end. */
export async function rawLogin(
  port: number,
  login: Login,
  localAddress?: string,
): Promise<number | 'closed'> {
  let connection: RawConnection;
  try {
    connection = await openRaw(port, localAddress);
  } catch {
    return 'closed';
  }
  const { socket } = connection;
  let received = Buffer.alloc(0);
  const connack = new Promise<number>((resolve) =>
    socket.on('data', (data: Buffer) => {
      received = Buffer.concat([received, data]);
      // CONNACK: 0x20, remaining length 2, acknowledge flags, return code (MQTT 3.1.1 section 3.2).
      if (received.length >= 4 && received[0] === 0x20) resolve(received[3]!);
    }),
  );
  socket.on('error', () => undefined);
  socket.write(connectPacket(login));
  const answer = await Promise.race([connack, connection.ended.then(() => 'closed' as const)]);
  socket.destroy();
  return answer;
}
