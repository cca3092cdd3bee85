import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { UsageError } from './key-file.js';

/**
 * An event delivery saved to a file, for `verify-webhook` (docs/design.md section 11.2; cloud/README.md, "The
 * company tool"). Two forms are read:
 * - JSON: `{"headers": {"webhook-id": ..., "webhook-timestamp": ..., "webhook-signature": ...}, "body": "..."}`,
 *   the body as the exact string received;
 * - the HTTP request as it came over the wire (request line, headers, an empty line, the body), as `nc -l` or a
 *   proxy's capture saves it. The body is the bytes after the empty line, cut to Content-Length when it is given.
 */
export interface SavedDelivery {
  /** Header names in lowercase. */
  headers: Record<string, string>;
  body: Uint8Array;
}

const jsonDeliverySchema = z.object({
  headers: z.record(z.string(), z.union([z.string(), z.number()])),
  body: z.string(),
});

export function readSavedDelivery(path: string): SavedDelivery {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new UsageError(`cannot read ${path}: ${(error as Error).message}`);
  }
  const text = bytes.toString('utf8');
  return text.trimStart().startsWith('{') ? jsonDelivery(path, text) : rawDelivery(path, bytes);
}

function jsonDelivery(path: string, text: string): SavedDelivery {
  let parsed: z.infer<typeof jsonDeliverySchema>;
  try {
    parsed = jsonDeliverySchema.parse(JSON.parse(text));
  } catch {
    throw new UsageError(
      `${path} is not a saved delivery: the JSON form is {"headers": {...}, "body": "<the body as received>"}`,
    );
  }
  const headers = Object.fromEntries(
    Object.entries(parsed.headers).map(([name, value]) => [name.toLowerCase(), String(value)]),
  );
  return { headers, body: Buffer.from(parsed.body, 'utf8') };
}

/** Request line, header lines (CRLF, or LF when an editor touched the file), an empty line, the body. */
function rawDelivery(path: string, bytes: Buffer): SavedDelivery {
  const crlf = bytes.indexOf('\r\n\r\n');
  const lf = bytes.indexOf('\n\n');
  const [end, gap] = crlf >= 0 && (lf < 0 || crlf < lf) ? [crlf, 4] : [lf, 2];
  const head = end < 0 ? '' : bytes.subarray(0, end).toString('latin1');
  const [requestLine = '', ...lines] = head.split(/\r?\n/);
  if (!/^[A-Z]+ \S+ HTTP\/\d(?:\.\d)?$/.test(requestLine)) {
    throw new UsageError(
      `${path} is neither a saved delivery in JSON nor an HTTP request (a line such as "POST /hooks HTTP/1.1", ` +
        'the headers, an empty line and the body)',
    );
  }
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new UsageError(`${path}: "${line}" is not a header line`);
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]} ${value}`;
  }
  if (headers['transfer-encoding'] !== undefined) {
    throw new UsageError(`${path}: a chunked body cannot be checked as saved; save the body itself`);
  }
  return { headers, body: rawBody(path, bytes.subarray(end + gap), headers['content-length']) };
}

function rawBody(path: string, rest: Buffer, contentLength: string | undefined): Uint8Array {
  if (contentLength === undefined) return rest;
  const length = Number(contentLength);
  if (!/^\d+$/.test(contentLength) || rest.length < length) {
    throw new UsageError(
      `${path}: the body is shorter than its Content-Length (${contentLength} bytes); the capture is cut`,
    );
  }
  return rest.subarray(0, length);
}
