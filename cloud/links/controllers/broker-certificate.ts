import { readFile } from 'node:fs/promises';
import { createSecureContext, type SecureContext } from 'node:tls';
import type { EmbeddedTls } from '../../foundation/config.js';
import type { CloudContext } from '../../foundation/context.js';

/**
 * How often the certificate files are read again by default. A renewal (certbot, acme.sh) writes new files some
 * weeks before the old certificate ends, so a minute's delay costs nothing; reading two small files a minute
 * costs nothing either, and polling sees a renewal that replaces a symbolic link, which a watch on the old
 * file would miss.
 */
export const CERTIFICATE_POLL_MS = 60_000;

/** The oldest TLS a device may speak: TLS 1.0 and 1.1 are broken and every controller's Node.js has 1.2 and 1.3. */
export const MIN_TLS_VERSION = 'TLSv1.2';

/**
 * The embedded broker's certificate and key (MQTT_TLS_CERT_FILE, MQTT_TLS_KEY_FILE) as a secure context that
 * follows the files: every poll reads both, and a changed pair that makes a certificate replaces the context
 * new connections get; connections already open keep theirs. A changed pair that does not (a key written before
 * its certificate, a wrong file) is logged once at error and the old context kept (docs/design.md section 7.4).
 */
export class BrokerCertificate {
  readonly #files: EmbeddedTls;
  readonly #log: CloudContext['log'];
  #context: SecureContext;
  /** The last pair read, taken or not, so that one bad pair is logged once rather than at every poll. */
  #seen: string;
  #timer: NodeJS.Timeout | null = null;
  #polling: Promise<void> | null = null;

  private constructor(files: EmbeddedTls, log: CloudContext['log'], context: SecureContext, seen: string) {
    this.#files = files;
    this.#log = log;
    this.#context = context;
    this.#seen = seen;
  }

  /** Reads the pair; throws one line naming the setting when it cannot be read or does not make a certificate. */
  static async load(files: EmbeddedTls, log: CloudContext['log']): Promise<BrokerCertificate> {
    const pair = await readPair(files);
    const made = secureContext(pair);
    if (made instanceof Error) throw new Error(badPairMessage(files, made));
    return new BrokerCertificate(files, log, made, pairKey(pair));
  }

  /** What a new connection's handshake uses. */
  get context(): SecureContext {
    return this.#context;
  }

  /** Reads the files every `intervalMs` until stopped; the timer keeps no process alive. */
  watch(intervalMs: number): void {
    this.#timer = setInterval(() => {
      this.#polling ??= this.reload().finally(() => {
        this.#polling = null;
      });
    }, intervalMs);
    this.#timer.unref();
  }

  /** Reads the files now and takes a changed pair that makes a certificate. */
  async reload(): Promise<void> {
    let pair: Pair;
    try {
      pair = await readPair(this.#files);
    } catch (error) {
      this.#refuse('unreadable', error instanceof Error ? error.message : String(error));
      return;
    }
    const key = pairKey(pair);
    if (key === this.#seen) return;
    this.#seen = key;
    const made = secureContext(pair);
    if (made instanceof Error) {
      this.#log.error(
        { certFile: this.#files.certFile, keyFile: this.#files.keyFile, err: made },
        `${badPairMessage(this.#files, made)}; the broker keeps the certificate it had`,
      );
      return;
    }
    this.#context = made;
    this.#log.info({ certFile: this.#files.certFile }, 'the embedded MQTT broker took a new TLS certificate');
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#polling;
  }

  #refuse(key: string, message: string): void {
    if (this.#seen === key) return;
    this.#seen = key;
    this.#log.error(
      { certFile: this.#files.certFile, keyFile: this.#files.keyFile },
      `the embedded MQTT broker cannot read its TLS certificate (${message}); it keeps the one it had`,
    );
  }
}

interface Pair {
  cert: string;
  key: string;
}

async function readPair(files: EmbeddedTls): Promise<Pair> {
  const read = (name: string, path: string) =>
    readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw new Error(`${name} ${path} cannot be read: ${error.code ?? error.message}`);
    });
  const [cert, key] = await Promise.all([
    read('MQTT_TLS_CERT_FILE', files.certFile),
    read('MQTT_TLS_KEY_FILE', files.keyFile),
  ]);
  return { cert, key };
}

function pairKey(pair: Pair): string {
  return `${pair.cert}\0${pair.key}`;
}

/**
 * OpenSSL checks that the key belongs to the certificate here, so a mismatched pair is an Error, not a context.
 * An empty file is refused first: Node.js skips an empty `cert` or `key` without a word, and the context it makes
 * then fails every handshake. A renewal that truncates a file before writing it is seen empty by a poll.
 */
function secureContext(pair: Pair): SecureContext | Error {
  if (pair.cert.trim() === '') return new Error('the certificate file is empty');
  if (pair.key.trim() === '') return new Error('the key file is empty');
  try {
    return createSecureContext({ cert: pair.cert, key: pair.key, minVersion: MIN_TLS_VERSION });
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

function badPairMessage(files: EmbeddedTls, error: Error): string {
  return (
    `MQTT_TLS_CERT_FILE ${files.certFile} and MQTT_TLS_KEY_FILE ${files.keyFile} do not make a certificate ` +
    `(${error.message}): give the PEM certificate chain and its own private key`
  );
}
