import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import type { Host, Lab } from './network.js';
import { MQTT_PLAIN_PORT, MQTT_TLS_PORT } from './server-host.js';

/**
 * A packet capture on a host's interface with tshark, as an auditor would take one on the controller's link:
 * everything between the host and the server, written to a pcap file, then read back twice: decoded as MQTT on
 * the broker's TLS port (`-d tcp.port==8883,mqtt`), which shows any MQTT CONNECT sent in clear, and as tshark
 * decodes by default, which shows what is TLS and what is not.
 */
const run = promisify(execFile);
export const TSHARK = '/usr/bin/tshark';

export function captureMissing(): string | undefined {
  return existsSync(TSHARK) ? undefined : `tshark is not installed at ${TSHARK}: apt-get install tshark`;
}

export interface Capture {
  /** Stops the capture and waits for the file to be complete. */
  stop(): Promise<void>;
  readonly file: string;
}

/** The port of the marker connection that ends a capture: nothing listens there. */
const MARKER_PORT = 9;
/** The port of the marker connections that show a capture has begun: nothing listens there either. */
const START_MARKER_PORT = 7;
/** Start markers sent before the capture is taken as not running. */
const START_MARKER_TRIES = 10;

export async function startCapture(
  lab: Lab,
  host: Host,
  options: { peer: string; file: string },
): Promise<Capture> {
  // -P -l: a line per packet as tshark receives it from its capture process, which is how `stop` knows that
  // everything before the marker is in.
  const tshark = lab.spawn(host, TSHARK, [
    '-n',
    '-P',
    '-l',
    '-i',
    'eth0',
    '-f',
    `tcp and host ${options.peer}`,
    '-w',
    options.file,
  ]);
  await tshark.waitFor(/Capturing on 'eth0'/, 'tshark to capture');
  // "Capturing on" is printed as the capture process starts, which may be a moment before its first packet:
  // a marker connection is sent until one is seen, so that nothing the test sends after this is missed.
  const startMarker = `require('node:net').connect(${START_MARKER_PORT}, '${options.peer}').on('error', () => {})`;
  for (let tries = 1; ; tries++) {
    await lab.exec(host, process.execPath, ['-e', startMarker]);
    const seen = await tshark
      .waitFor(new RegExp(`→ ${START_MARKER_PORT} \\[SYN\\]`), 'the capture to see its start marker', 1_500)
      .then(
        () => true,
        (error: unknown) => {
          if (tries >= START_MARKER_TRIES) throw error;
          return false;
        },
      );
    if (seen) break;
  }
  let stopped = false;
  return {
    file: options.file,
    async stop() {
      if (stopped) return;
      stopped = true;
      // The capture process hands packets over in blocks and drops the block under way at SIGINT: a marker
      // connection (a SYN to a closed port, no payload) is sent, and the capture ends once the marker was seen.
      const marker = `require('node:net').connect(${MARKER_PORT}, '${options.peer}').on('error', () => {})`;
      await lab.exec(host, process.execPath, ['-e', marker]);
      await tshark.waitFor(
        new RegExp(`→ ${MARKER_PORT} \\[SYN\\]`),
        'the capture to see its end marker',
        15_000,
      );
      await tshark.stop(10_000, 'SIGINT');
    },
  };
}

async function fields(file: string, args: readonly string[], field: string): Promise<string[]> {
  const { stdout } = await run(
    TSHARK,
    ['-n', '-o', 'tcp.desegment_tcp_streams:FALSE', '-r', file, ...args, '-T', 'fields', '-e', field],
    {
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  return stdout.split('\n').filter(Boolean);
}

/** TCP's own repairs, as tshark's TCP analysis marks them. */
const TCP_REPAIRS = [
  'tcp.analysis.retransmission',
  'tcp.analysis.fast_retransmission',
  'tcp.analysis.spurious_retransmission',
  'tcp.analysis.out_of_order',
  'tcp.analysis.lost_segment',
  'tcp.analysis.keep_alive',
  'tcp.analysis.zero_window_probe',
];

export interface CaptureReading {
  /** Frames carrying TCP payload between the two hosts. */
  payloadFrames: number;
  /**
   * The user names of MQTT CONNECT packets readable in clear, on either of the broker's ports: a protocol name
   * of "MQTT" or "MQIsdp" after the fixed header.
   */
  clearConnects: string[];
  /** TCP ports of payload frames that are not TLS. */
  nonTlsPorts: string[];
  /** What tshark says of each of those frames, for the failure's message. */
  nonTlsFrames: string[];
  /** Frames that are TLS records on the broker's TLS port. */
  brokerTlsFrames: number;
  /** Whether the bytes of `secret` appear anywhere in the capture. */
  holds(secret: string): boolean;
}

export async function readCapture(file: string): Promise<CaptureReading> {
  // A TLS record starts with 0x16, which MQTT would read as a CONNECT's first byte: only a CONNECT with its
  // protocol name is one in clear.
  const clearConnects = await fields(
    file,
    [
      '-d',
      `tcp.port==${MQTT_TLS_PORT},mqtt`,
      '-d',
      `tcp.port==${MQTT_PLAIN_PORT},mqtt`,
      '-Y',
      'mqtt.msgtype == 1 && (mqtt.protoname == "MQTT" || mqtt.protoname == "MQIsdp")',
    ],
    'mqtt.username',
  );
  const payloadFrames = (await fields(file, ['-Y', 'tcp.len > 0'], 'frame.number')).length;
  // A segment TCP sends again (under load), or one after a segment the capture missed, is bytes tshark cannot hand
  // to TLS for what it is, though they are the same ciphertext: their bytes are still searched by `holds`.
  const nonTlsFilter = `tcp.len > 0 && !tls && !(${TCP_REPAIRS.join(' || ')})`;
  const nonTls = await fields(file, ['-Y', nonTlsFilter], 'tcp.dstport');
  const nonTlsFrames = await fields(file, ['-Y', nonTlsFilter], '_ws.col.Info');
  const brokerTlsFrames = (await fields(file, ['-Y', `tls && tcp.port == ${MQTT_TLS_PORT}`], 'frame.number'))
    .length;
  const bytes = readFileSync(file);
  return {
    payloadFrames,
    clearConnects,
    nonTlsPorts: [...new Set(nonTls)],
    nonTlsFrames,
    brokerTlsFrames,
    holds: (secret) => bytes.includes(Buffer.from(secret, 'utf8')),
  };
}
