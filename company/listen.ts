import { setTimeout as sleep } from 'node:timers/promises';
import { GatelinkError, type ListenedEvent } from './client/index.js';
import { type Command, required, type ToolOutput, toolCommand } from './command.js';
import { CONNECTION_OPTIONS, CONNECTION_USAGE, companyClient } from './connection.js';
import { UsageError } from './key-file.js';

/**
 * `listen --forward-to URL` (cloud/README.md, "Trying events"; docs/design.md section 6.1): the company's events
 * streamed from the cloud, each forwarded to a local receiver with the very headers and body a delivery has, so
 * that the receiver verifies it as a real one, and each printed with the receiver's answer. A stream the cloud
 * or the network ends is opened again after a pause; a refusal (wrong credentials, too many streams) ends the
 * command. Ctrl-C stops it.
 */
const FORWARD_TIMEOUT_MS = 10_000;
const RECONNECT_MS = 2_000;

export const listen: Command = {
  name: 'listen',
  summary: 'stream your events and forward each, signed, to a local address',
  usage: `Usage: gatelink-company listen --forward-to URL [--json]

Streams your events from now on, each as the delivery your callback address gets, and sends each to URL (such
as http://localhost:3000/hook) as a POST with the same headers and body: your receiver verifies it as a real
delivery, with your signing secret (v1) or the service's key (v1a). Prints a line per event with your
receiver's answer; --json prints one JSON object per line instead. Stop it with Ctrl-C.

Try it with \`gatelink-company trigger ping\` in another terminal.

${CONNECTION_USAGE}`,
  options: { ...CONNECTION_OPTIONS, 'forward-to': { type: 'string' }, json: { type: 'boolean' } },
  async run(values, io, env, stop) {
    const target = forwardTarget(required(values, 'forward-to', 'the local address to send events to'));
    const client = companyClient(values, env);
    const json = values.json === true;
    if (!json) io.out(`Listening; forwarding each event to ${target}. Ctrl-C stops.\n`);
    while (!stop?.aborted) {
      try {
        for await (const event of client.listen(stop ? { signal: stop } : {})) {
          await forward(event, target, io, json);
        }
        if (!json) io.out('The cloud ended the stream; listening again.\n');
      } catch (error) {
        if (stop?.aborted) break;
        if (error instanceof GatelinkError && error.status >= 400 && error.status < 500) throw error;
        const why = error instanceof Error ? error.message : String(error);
        io.err(
          `The stream broke (${why}); listening again in ${RECONNECT_MS / 1000} s. Events meanwhile still go to your callback address.\n`,
        );
      }
      await sleep(RECONNECT_MS, undefined, stop ? { signal: stop } : {}).catch(() => {});
    }
    if (!json) io.out(`Stopped. \`${toolCommand(env)} listen\` again to go on.\n`);
    return 0;
  },
};

function forwardTarget(text: string): string {
  const url = URL.parse(text);
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new UsageError(
      `--forward-to ${text} is not an http or https address, such as http://localhost:3000/hook`,
    );
  }
  return url.href;
}

async function forward(event: ListenedEvent, target: string, io: ToolOutput, json: boolean): Promise<void> {
  const id = event.headers['webhook-id'];
  const began = performance.now();
  let outcome: { status: number } | { error: string };
  try {
    const response = await fetch(target, {
      method: 'POST',
      headers: { ...event.headers, 'content-type': 'application/json', 'user-agent': 'gatelink-listen/1' },
      body: event.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    await response.body?.cancel();
    outcome = { status: response.status };
  } catch (error) {
    // fetch says only "fetch failed"; the reason (ECONNREFUSED, a timeout, a refused port) is its cause.
    const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
    const why = typeof cause?.code === 'string' ? cause.code : cause?.message;
    outcome = {
      error: typeof why === 'string' ? why : error instanceof Error ? error.message : String(error),
    };
  }
  const ms = Math.round(performance.now() - began);
  if (json) {
    io.out(`${JSON.stringify({ seq: event.seq, type: event.type, id, ...outcome, ms })}\n`);
    return;
  }
  const answer = 'status' in outcome ? `${outcome.status}` : `no answer (${outcome.error})`;
  io.out(
    `${new Date().toISOString().slice(11, 19)}  ${event.type.padEnd(20)} ${id}  -> ${answer}, ${ms} ms\n`,
  );
}
