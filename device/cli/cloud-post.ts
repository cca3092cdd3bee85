import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { rootCertificates } from 'node:tls';

/** The answer's limit: the cloud's answers to the CLI are a few kilobytes. */
const MAX_ANSWER_BYTES = 1024 * 1024;

export interface CloudPost {
  /** JSON to send; none for a device call, which has no body. */
  body?: string;
  /** A PEM bundle trusted besides the system's roots (`--ca-file`, then `mqtt.ca_file`). */
  ca?: string | undefined;
  headers?: Record<string, string>;
  timeoutMs?: number;
}

/**
 * POSTs to the cloud with node:http(s), which takes a CA where fetch does not: with `ca`, the cloud's
 * certificate may be signed by the system's roots or by a CA of that file. Redirects are not followed.
 */
export function postToCloud(url: string, post: CloudPost): Promise<{ status: number; text: string }> {
  const target = new URL(url);
  const secure = target.protocol === 'https:';
  const send = secure ? httpsRequest : httpRequest;
  const timeoutMs = post.timeoutMs ?? 15_000;
  const body = post.body ?? '';
  const headers: Record<string, string | number> = {
    accept: 'application/json',
    'content-length': Buffer.byteLength(body),
    ...(post.body === undefined ? {} : { 'content-type': 'application/json' }),
    ...post.headers,
  };
  return new Promise((resolvePost, reject) => {
    const req = send(
      target,
      {
        method: 'POST',
        headers,
        timeout: timeoutMs,
        ...(secure && post.ca !== undefined ? { ca: [...rootCertificates, post.ca] } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) req.destroy(new Error('the answer is too large'));
          else chunks.push(chunk);
        });
        res.on('end', () =>
          resolvePost({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${Math.round(timeoutMs / 1000)} s`)));
    req.on('error', reject);
    req.end(body);
  });
}
