import { isIP } from 'node:net';

/**
 * A broker address may name several nodes of a broker cluster, comma-separated
 * (`mqtt://node1:1883,mqtt://node2:1883`): the cloud's MQTT_URL and MQTT_PUBLIC_URL, and a device's `mqtt.url`.
 * A client connects to the first and, each time it reconnects, to the next one, round the list
 * (docs/design.md section 7.2). User name and password, when given, are those of the first URL.
 */
export function brokerUrls(list: string): string[] {
  return list
    .split(',')
    .map((url) => url.trim())
    .filter((url) => url.length > 0);
}

export interface BrokerServer {
  host: string;
  port: number;
  protocol: 'mqtt' | 'mqtts' | 'ws' | 'wss';
}

/** mqtt.js's `connect(url, {servers})` for the list: the first URL, and every node when there are several. */
export function brokerConnection(list: string): { url: string; servers: BrokerServer[] | undefined } {
  const urls = brokerUrls(list);
  const first = urls[0] ?? list;
  if (urls.length < 2) return { url: first, servers: undefined };
  const servers = urls.map((url) => {
    const parsed = new URL(url);
    const protocol = parsed.protocol.replace(/:$/, '') as BrokerServer['protocol'];
    const port = parsed.port ? Number(parsed.port) : DEFAULT_PORTS[protocol];
    return { host: parsed.hostname, port, protocol };
  });
  return { url: first, servers };
}

const DEFAULT_PORTS: Record<BrokerServer['protocol'], number> = { mqtt: 1883, mqtts: 8883, ws: 80, wss: 443 };

/** The list as shown to devices and in logs: never with user names and passwords. */
export function withoutCredentials(list: string): string {
  return brokerUrls(list)
    .map((url) => {
      const parsed = new URL(url);
      parsed.username = '';
      parsed.password = '';
      return parsed.toString();
    })
    .join(',');
}

/**
 * 127.0.0.0/8, ::1 and localhost (and names under .localhost): this machine, whose traffic nobody on the network
 * can read. The one rule by which the cloud (what production hands controllers) and the controller (what it
 * connects to without TLS) tell a broker on this machine from one across a network (docs/design.md section 7.4).
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (host === 'localhost' || host.endsWith('.localhost') || host === '::1') return true;
  return isIP(host) === 4 && host.split('.')[0] === '127';
}

/** The list's plain `mqtt://` and `ws://` URLs to hosts across a network: a password and commands in the clear. */
export function plainRemoteUrls(list: string): string[] {
  return brokerUrls(list).filter((one) => {
    if (!URL.canParse(one)) return false;
    const url = new URL(one);
    return (url.protocol === 'mqtt:' || url.protocol === 'ws:') && !isLoopbackHost(url.hostname);
  });
}
