import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { brokerUrls } from '../shared/protocol/broker-urls.js';

/**
 * How the controller protects its link to the broker (docs/design.md section 9): TLS to any broker that is not on
 * this board, checked against `mqtt.ca_file` when set, else against the system's trust store. Without zod, so
 * that the daemon's early connection (./runtime/early-connection.ts) applies the same rules as the config before
 * the schema is loaded.
 */

const PLAIN = new Set(['mqtt:', 'ws:']);

/** 127.0.0.0/8, ::1 and localhost: a broker on this board, which nobody on the network can listen to. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && host.split('.')[0] === '127';
}

/** The first URL of the list that would carry the password and commands in the clear over a network. */
export function plainRemoteUrl(list: string): string | undefined {
  return brokerUrls(list).find((one) => {
    try {
      const url = new URL(one);
      return PLAIN.has(url.protocol) && !isLoopbackHost(url.hostname);
    } catch {
      return false;
    }
  });
}

/** Why such a URL is refused (under the key mqtt.url), and what to do. */
export function plainRemoteProblem(url: string): string {
  return `${withoutUserInfo(url)} sends the broker password and every command in the clear; use mqtts:// (TLS, port 8883) or set mqtt.insecure: true on a trusted network`;
}

/**
 * The CA certificates of a PEM file (one or a bundle), as text for node:tls's `ca`. Throws an Error whose message
 * says in a few words why the file cannot be used: missing, unreadable, or holding no certificate.
 */
export function readCaBundle(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(code === 'ENOENT' ? 'the file does not exist' : `it cannot be read (${code ?? 'error'})`);
  }
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new Error('it holds no PEM certificate (-----BEGIN CERTIFICATE-----)');
  blocks.forEach((block, index) => {
    try {
      new X509Certificate(block);
    } catch {
      throw new Error(`certificate ${index + 1} of the file cannot be read as X.509`);
    }
  });
  return blocks.join('\n');
}

function withoutUserInfo(value: string): string {
  try {
    const url = new URL(value);
    url.username = '';
    url.password = '';
    return url.href;
  } catch {
    return value;
  }
}
