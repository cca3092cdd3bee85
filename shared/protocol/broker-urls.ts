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
