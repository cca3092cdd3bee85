import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

/**
 * The receiving end of the events benchmark (events.ts), in a process of its own as a company's server would
 * be: answers 204 to every POST, and tells the parent each event's id and the moment it arrived (wall-clock
 * milliseconds, high resolution), in batches so that telling costs little.
 */
let arrivals: [string, number][] = [];
let flushing = false;

const flush = () => {
  flushing = false;
  if (arrivals.length === 0) return;
  process.send?.({ type: 'arrivals', arrivals });
  arrivals = [];
};

const server = createServer((request, response) => {
  const id = request.headers['webhook-id'];
  const at = performance.timeOrigin + performance.now();
  request.resume();
  request.on('end', () => {
    response.writeHead(204).end();
    if (typeof id === 'string') {
      arrivals.push([id, at]);
      if (!flushing) {
        flushing = true;
        setTimeout(flush, 5);
      }
    }
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.send?.({ type: 'ready', port: (server.address() as AddressInfo).port });
});
process.on('disconnect', () => process.exit(0));
