import { isIPv4 } from 'node:net';
import { brokerUrls, withoutCredentials } from '../../shared/protocol/broker-urls.js';
import type { CloudConfig } from './config.js';

/**
 * What production refuses of the MQTT settings (docs/design.md section 7.4): the cloud never hands a controller
 * a plain `mqtt://` (or `ws://`) address on a host other than this machine, since the device's password and
 * every command would cross the network readable and alterable. One line per refusal, naming the setting and
 * what to do; none outside production, where the demo and tests run on plain loopback.
 */
export function mqttProductionRefusals(config: CloudConfig): string[] {
  if (!config.production) return [];
  const mqtt = config.mqtt;
  if (mqtt.publicUrl !== undefined) return publicUrlRefusals(mqtt.publicUrl);
  if (mqtt.kind === 'embedded') {
    if (mqtt.tls) return [];
    const host = new URL(config.baseUrl ?? 'http://localhost').hostname;
    if (isLoopbackHost(host)) return [];
    return [
      `the embedded broker would hand controllers plain mqtt://${host}:${mqtt.port}: set MQTT_TLS_CERT_FILE and ` +
        'MQTT_TLS_KEY_FILE for its TLS listener, or MQTT_PUBLIC_URL to the mqtts:// address of a TLS proxy in front',
    ];
  }
  const loopback = loopbackBrokerHosts(mqtt.url);
  if (loopback.length > 0) return [externalLoopbackLine(mqtt.url, loopback)];
  const plain = plainRemoteUrls(mqtt.url);
  if (plain.length === 0) return [];
  return [
    `MQTT_PUBLIC_URL is unset, so controllers would be given MQTT_URL's plain ${plain.join(', ')}: set ` +
      'MQTT_PUBLIC_URL to the broker\'s mqtts:// address for devices (deploy/mosquitto/README.md, "TLS")',
  ];
}

/**
 * The one line for an external broker named on this machine with no MQTT_PUBLIC_URL: controllers elsewhere would
 * be told an address that is their own machine. Production refuses it; elsewhere it is a warning.
 */
export function externalLoopbackLine(mqttUrl: string, hosts: readonly string[]): string {
  return (
    `MQTT_PUBLIC_URL is unset and MQTT_URL names this machine (${hosts.join(', ')}), so controllers would be ` +
    `told ${withoutCredentials(mqttUrl)}, which they cannot reach: set MQTT_PUBLIC_URL to the mqtts:// address ` +
    'controllers reach the broker at'
  );
}

/** The loopback hosts among a broker list's URLs (`localhost`, 127.0.0.0/8, ::1). */
export function loopbackBrokerHosts(list: string): string[] {
  return brokerUrls(list)
    .map((url) => new URL(url).hostname)
    .filter(isLoopbackHost);
}

/** Whether a URL's host name is this machine: `localhost`, an address of 127.0.0.0/8, or ::1. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost') || host === '::1') return true;
  return isIPv4(host) && host.startsWith('127.');
}

function publicUrlRefusals(list: string): string[] {
  const plain = plainRemoteUrls(list);
  if (plain.length === 0) return [];
  return [
    `MQTT_PUBLIC_URL hands controllers plain ${plain.join(', ')}: use mqtts:// (the embedded broker's TLS ` +
      'listener with MQTT_TLS_CERT_FILE and MQTT_TLS_KEY_FILE, or a broker or proxy that speaks TLS)',
  ];
}

/** The list's `mqtt://` and `ws://` URLs on hosts other than this machine, without credentials. */
function plainRemoteUrls(list: string): string[] {
  return brokerUrls(list)
    .map((url) => new URL(url))
    .filter((url) => (url.protocol === 'mqtt:' || url.protocol === 'ws:') && !isLoopbackHost(url.hostname))
    .map((url) => withoutCredentials(url.toString()));
}
