import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import type { ConnectionLimits, RefusalReason } from './connection-limits.js';
import { PacketMeter } from './packet-meter.js';

export interface GuardEvents {
  /** The connection broke a limit and is being closed; called once, before the socket is destroyed. */
  refused(reason: RefusalReason, bytesRead: number): void;
  /** The connection stopped being a pending one: it was authenticated, or it closed. Called once. */
  settled(): void;
}

/**
 * A device's socket as the embedded broker reads it: every chunk is measured before aedes may see it, and the
 * socket is destroyed, with the chunk dropped, as soon as a limit of ./connection-limits.ts is broken. Until
 * `authenticated()` the connection may send only a small CONNECT's worth of bytes and must get there in time;
 * afterwards each packet may be up to `packetBytes`. Nothing is buffered here beyond what aedes has not read
 * yet (the socket pauses then); aedes's own parser holds at most one packet of the allowed size.
 */
export class GuardedConnection extends Duplex {
  readonly #socket: Socket;
  readonly #limits: ConnectionLimits;
  readonly #events: GuardEvents;
  readonly #meter = new PacketMeter();
  /** Until the connection settles; dropped then, as every idle device's connection would keep one. */
  #timer: NodeJS.Timeout | null;
  #authenticated = false;
  #settled = false;
  #refused = false;
  #connectingBytes = 0;
  #drained: (() => void) | null = null;

  constructor(socket: Socket, limits: ConnectionLimits, events: GuardEvents) {
    super({ allowHalfOpen: false });
    this.#socket = socket;
    this.#limits = limits;
    this.#events = events;
    this.#timer = setTimeout(() => this.#refuse('connect_timeout'), limits.connectTimeoutMs);
    socket.on('data', (chunk: Buffer) => this.#take(chunk));
    socket.on('end', () => this.push(null));
    socket.on('drain', () => this.#onDrain());
    socket.on('error', (error) => this.destroy(error));
    socket.on('close', () => {
      this.#settle();
      this.destroy();
    });
  }

  /** The device's address, as on its socket, for the log lines of the access rules (embedded-access.ts). */
  get remoteAddress(): string | undefined {
    return this.#socket.remoteAddress;
  }

  /** The device's credentials were accepted: from now on the per-packet limit applies, and no time limit. */
  authenticated(): void {
    this.#authenticated = true;
    this.#settle();
  }

  override _read(): void {
    this.#socket.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.#socket.write(chunk);
    this.#afterWrite(callback);
  }

  /** What mqtt-packet writes for one packet (it corks the stream) goes out in one piece, as on the socket. */
  override _writev(
    chunks: { chunk: Buffer; encoding: BufferEncoding }[],
    callback: (error?: Error | null) => void,
  ): void {
    this.#socket.cork();
    for (const { chunk } of chunks) this.#socket.write(chunk);
    this.#socket.uncork();
    this.#afterWrite(callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.#socket.end();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#settle();
    this.#socket.destroy();
    callback(error);
  }

  #take(chunk: Buffer): void {
    if (this.#refused) return;
    const broken = this.#brokenLimit(chunk);
    if (broken) this.#refuse(broken);
    else if (!this.push(chunk)) this.#socket.pause();
  }

  #brokenLimit(chunk: Buffer): RefusalReason | null {
    const largest = this.#meter.largestIn(chunk);
    if (!Number.isFinite(largest)) return 'malformed_length';
    if (this.#authenticated) return largest > this.#limits.packetBytes ? 'packet_too_large' : null;
    this.#connectingBytes += chunk.length;
    const budget = this.#limits.connectingBytes;
    return largest > budget || this.#connectingBytes > budget ? 'connect_too_large' : null;
  }

  #refuse(reason: RefusalReason): void {
    if (this.#refused || this.#socket.destroyed) return;
    this.#refused = true;
    this.#events.refused(reason, this.#socket.bytesRead);
    this.#socket.destroy();
  }

  #settle(): void {
    if (this.#settled) return;
    this.#settled = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#events.settled();
  }

  /** Backpressure passes through: the next write waits until the socket has sent what it holds. */
  #afterWrite(callback: () => void): void {
    if (this.#socket.writableNeedDrain) this.#drained = callback;
    else callback();
  }

  #onDrain(): void {
    const drained = this.#drained;
    this.#drained = null;
    drained?.();
  }
}
