import { z } from 'zod';

/** How `gatelink-admin` reaches the operator API: its address, its token, and whether to print JSON. */
export interface Connection {
  url: string;
  token: string;
  json: boolean;
}

export type Row = Record<string, unknown>;

/** A mistake in how the command was typed: exit status 2 and a pointer to the usage. */
export class UsageError extends Error {
  override name = 'UsageError';
}

const answerSchema = z.record(z.string(), z.unknown());

/** One call of the operator API; a refusal becomes an error saying its code and message. */
export function call(connection: Connection, method: 'GET' | 'POST', path: string, body?: unknown) {
  return send(connection, method, path, {
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/**
 * A POST whose body is a file, streamed rather than read whole (a release bundle, docs/design.md section
 * 12.4.2), with headers of its own.
 */
export function upload(
  connection: Connection,
  path: string,
  file: ReadableStream<Uint8Array>,
  headers: Record<string, string>,
) {
  return send(connection, 'POST', path, { headers, body: file, duplex: 'half' });
}

async function send(
  connection: Connection,
  method: 'GET' | 'POST',
  path: string,
  request: { headers: Record<string, string>; body?: string | ReadableStream<Uint8Array>; duplex?: 'half' },
) {
  let response: Response;
  try {
    response = await fetch(new URL(path, connection.url), {
      ...request,
      method,
      headers: { authorization: `Bearer ${connection.token}`, ...request.headers },
      // The token is for this address alone: a redirect is refused, never followed with it.
      redirect: 'manual',
      // `duplex` (a streamed body) is undici's, missing from the DOM type of the options.
    } as RequestInit);
  } catch {
    throw new Error(
      `cannot reach the cloud at ${connection.url}: is it running (npm start, or npm run cloud)?`,
    );
  }
  if (response.status >= 300 && response.status < 400) {
    throw new Error(
      `the cloud at ${connection.url} answered with a redirect (HTTP ${response.status}) to ${response.headers.get('location') ?? 'elsewhere'}; the operator token is not sent on: name the cloud's own address with --url or GATELINK_URL`,
    );
  }
  const answer = answerSchema.parse(await response.json().catch(() => ({})));
  if (!response.ok) {
    const code = typeof answer.error === 'string' ? answer.error : `HTTP ${response.status}`;
    throw new Error(
      `${code}: ${typeof answer.message === 'string' ? answer.message : 'the cloud refused the call'}`,
    );
  }
  return answer;
}

/** Rows as aligned text columns, `-` for an empty cell. */
export function table(rows: Row[], columns: string[]): string {
  if (rows.length === 0) return '(none)';
  const cells = rows.map((row) => columns.map((column) => formatCell(row[column])));
  const widths = columns.map((column, i) => Math.max(column.length, ...cells.map((line) => line[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((value, i) => value.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(columns), ...cells.map(line)].join('\n');
}

function formatCell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
