import type { Socket } from 'node:net';
import type { CloudContext } from '../../foundation/context.js';
import { GuardedConnection } from './guarded-connection.js';

/**
 * What the embedded broker lets any one connection cost (cloud/README.md, "Broker limits"). The broker shares
 * its process with the HTTP API and the embedded database, so a connection that can make it buffer without
 * bound takes the whole service down: aedes's parser keeps a packet until all the bytes its fixed header
 * declares have arrived, however many that is, and before the client has logged in.
 */
export interface ConnectionLimits {
  /** Bytes a connection may send before it is authenticated, its CONNECT included. */
  connectingBytes: number;
  /** The largest packet an authenticated device may send, fixed header included. */
  packetBytes: number;
  /** Connections from one remote address that are accepted and not yet authenticated. */
  pendingPerAddress: number;
  /** Time from accepting a connection until it is authenticated. */
  connectTimeoutMs: number;
}

/**
 * A device's CONNECT is 185 bytes: client id, user name and password of its account, and its will (its state
 * topic and an "offline" state). A device sends nothing else before its CONNACK, which comes only once it is
 * authenticated; 4 KiB leaves room for a long topic prefix twenty times over.
 */
export const CONNECTING_MAX_BYTES = 4 * 1024;

/**
 * Commands, acks, state and telemetry are a few hundred bytes, and the cloud drops a message over 16 KiB unread
 * (device-messages.ts); 64 KiB holds the largest with room, and a packet declaring more closes the connection
 * at its fixed header, before its bytes are read.
 */
export const PACKET_MAX_BYTES = 64 * 1024;

/**
 * A connection takes milliseconds from accept to authenticated, so even a few dozen devices behind one shared
 * address (a mobile carrier's NAT) rarely have this many pending at once after a broker restart; one refused
 * retries after its back-off. An address holding more is opening connections it does not finish.
 */
export const PENDING_PER_ADDRESS = 32;

/**
 * A device connects within a second even over a slow mobile link, and gives up on its own after 10 s
 * (device/runtime/session.ts); aedes's default of 30 s would let a silent connection hold its place three times
 * as long.
 */
export const CONNECT_TIMEOUT_MS = 10_000;

export const CONNECTION_LIMITS: Readonly<ConnectionLimits> = Object.freeze({
  connectingBytes: CONNECTING_MAX_BYTES,
  packetBytes: PACKET_MAX_BYTES,
  pendingPerAddress: PENDING_PER_ADDRESS,
  connectTimeoutMs: CONNECT_TIMEOUT_MS,
});

/** Why a connection was closed by the broker, as its log line says. */
export type RefusalReason =
  | 'too_many_pending'
  | 'connect_timeout'
  | 'connect_too_large'
  | 'packet_too_large'
  | 'malformed_length';

/**
 * Admits accepted sockets under the limits: refuses at once one from an address that already holds its share of
 * pending connections, and wraps the others in a GuardedConnection for aedes. Each refusal is logged once, at
 * warn, with the remote address and the reason.
 */
export class ConnectionGate {
  readonly #limits: ConnectionLimits;
  readonly #log: CloudContext['log'];
  /** Pending connections by remote address; an address leaves the map when it has none. */
  readonly #pending = new Map<string, number>();

  constructor(log: CloudContext['log'], limits: ConnectionLimits) {
    this.#log = log;
    this.#limits = limits;
  }

  /**
   * The stream to hand to aedes, or null when the socket was refused (it is destroyed then). `secure` wraps an
   * admitted socket in TLS: the guard then reads the decrypted stream, and its time limit runs from the accept,
   * so a handshake that never completes is closed at `connectTimeoutMs` as a silent CONNECT is.
   */
  admit(socket: Socket, secure?: (socket: Socket) => Socket): GuardedConnection | null {
    const address = socket.remoteAddress;
    if (address === undefined) {
      // Already closed by the peer before it was accepted: nothing to serve, nothing to log.
      socket.destroy();
      return null;
    }
    const pending = this.#pending.get(address) ?? 0;
    if (pending >= this.#limits.pendingPerAddress) {
      this.#refused(address, 'too_many_pending', 0);
      socket.destroy();
      return null;
    }
    this.#pending.set(address, pending + 1);
    return new GuardedConnection(secure ? secure(socket) : socket, this.#limits, {
      refused: (reason, bytesRead) => this.#refused(address, reason, bytesRead),
      settled: () => this.#release(address),
    });
  }

  #release(address: string): void {
    const pending = (this.#pending.get(address) ?? 1) - 1;
    if (pending > 0) this.#pending.set(address, pending);
    else this.#pending.delete(address);
  }

  #refused(remote: string, reason: RefusalReason, bytes: number): void {
    this.#log.warn({ remote, reason, bytes }, 'refused an MQTT connection');
  }
}
