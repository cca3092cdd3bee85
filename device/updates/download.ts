import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { rootCertificates } from 'node:tls';
import type { SigningKey } from '../../shared/crypto/ed25519.js';
import { signDeviceCall } from '../../shared/protocol/updates.js';

export interface DownloadOptions {
  url: string;
  deviceId: string;
  deviceKey: SigningKey;
  /** The file the bundle is written to. */
  file: string;
  /** The manifest's size: more is refused. */
  size: number;
  /** The CA of mqtt.ca_file (PEM), trusted besides the system's roots, as for the cloud at provisioning. */
  ca?: string;
  now: () => number;
  timeoutMs?: number;
}

export class DownloadError extends Error {}

const EMPTY_SHA256 = createHash('sha256').update('').digest('hex');

/**
 * Fetches a bundle with a call signed by the device key (shared/protocol/updates.ts), streamed to `file` while
 * hashing, never more than the manifest's size. Resolves with the SHA-256 (hex) of what was written.
 */
export function downloadBundle(options: DownloadOptions): Promise<string> {
  const target = new URL(options.url);
  const secure = target.protocol === 'https:';
  const headers = signDeviceCall(options.deviceKey, options.deviceId, {
    method: 'GET',
    path: `${target.pathname}${target.search}`,
    time: options.now(),
    bodySha256: EMPTY_SHA256,
  });
  return new Promise((resolve, reject) => {
    const request = (secure ? httpsRequest : httpRequest)(
      target,
      {
        method: 'GET',
        headers,
        timeout: options.timeoutMs ?? 30_000,
        ...(secure && options.ca !== undefined ? { ca: [...rootCertificates, options.ca] } : {}),
      },
      (response) => {
        if (response.statusCode !== 200) {
          response.resume();
          reject(new DownloadError(`the cloud answered ${response.statusCode ?? 0}`));
          return;
        }
        save(response, options).then(resolve, reject);
      },
    );
    request.on('timeout', () => request.destroy(new DownloadError('no data for 30 s')));
    request.on('error', (error) =>
      reject(error instanceof DownloadError ? error : new DownloadError(error.message)),
    );
    request.end();
  });
}

function save(response: IncomingMessage, options: DownloadOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    const out = createWriteStream(options.file, { mode: 0o600 });
    let size = 0;
    const fail = (error: Error) => {
      response.destroy();
      out.destroy();
      reject(error instanceof DownloadError ? error : new DownloadError(error.message));
    };
    response.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > options.size)
        return fail(new DownloadError(`larger than the manifest's ${options.size} bytes`));
      hash.update(chunk);
      if (!out.write(chunk)) {
        response.pause();
        out.once('drain', () => response.resume());
      }
    });
    response.on('error', fail);
    response.on('aborted', () => fail(new DownloadError('the download was cut off')));
    response.on('end', () => {
      out.end(() => {
        // Closed; the hash check and the unpack come next.
        resolve(hash.digest('hex'));
      });
    });
    out.on('error', fail);
  });
}
