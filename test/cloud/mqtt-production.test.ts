import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadCloudConfig } from '../../cloud/foundation/config.js';
import { mqttProductionRefusals } from '../../cloud/foundation/mqtt-production.js';
import { isLoopbackHost } from '../../shared/protocol/broker-urls.js';

/*
 * Which broker addresses production refuses to hand controllers (docs/design.md section 7.4), and how the
 * TLS settings of the embedded broker are read (cloud/README.md, "TLS for controllers").
 */
const production = (env: Record<string, string>) =>
  mqttProductionRefusals(loadCloudConfig({ NODE_ENV: 'production', ...env }));
const TLS = {
  MQTT_TLS_CERT_FILE: '/etc/gatelink/fullchain.pem',
  MQTT_TLS_KEY_FILE: '/etc/gatelink/privkey.pem',
};
const BASE = { BASE_URL: 'https://gate.example.com' };

describe('mqttProductionRefusals', () => {
  it('refuses nothing outside production, where the demo hands out plain loopback MQTT', () => {
    expect(mqttProductionRefusals(loadCloudConfig({ ...BASE }))).toEqual([]);
    expect(
      mqttProductionRefusals(loadCloudConfig({ MQTT_URL: 'mqtt://cloud:pw@broker.example:1883' })),
    ).toEqual([]);
  });

  it('refuses the embedded broker without TLS on a public host, naming what to set', () => {
    expect(production(BASE)).toEqual([
      'the embedded broker would hand controllers plain mqtt://gate.example.com:1884: set MQTT_TLS_CERT_FILE and MQTT_TLS_KEY_FILE for its TLS listener, or MQTT_PUBLIC_URL to the mqtts:// address of a TLS proxy in front',
    ]);
  });

  it('takes the embedded broker with its TLS listener, or an mqtts:// MQTT_PUBLIC_URL in front', () => {
    expect(production({ ...BASE, ...TLS })).toEqual([]);
    expect(production({ ...BASE, MQTT_PUBLIC_URL: 'mqtts://mqtt.example.com:8883' })).toEqual([]);
  });

  it('takes plain MQTT that stays on this machine', () => {
    expect(production({ BASE_URL: 'http://127.0.0.1:8080' })).toEqual([]);
    expect(production({ ...BASE, MQTT_PUBLIC_URL: 'mqtt://localhost:1884' })).toEqual([]);
  });

  it('refuses an MQTT_PUBLIC_URL with plain MQTT to another host, even beside TLS', () => {
    const refusals = production({
      ...BASE,
      ...TLS,
      MQTT_PUBLIC_URL: 'mqtts://a.example.com:8883,mqtt://b.example.com:1883',
    });
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatch(
      /^MQTT_PUBLIC_URL hands controllers plain mqtt:\/\/b\.example\.com:1883: use mqtts:\/\//,
    );
  });

  it('refuses an external broker without MQTT_PUBLIC_URL when MQTT_URL is plain or on this machine', () => {
    const [plain] = production({ MQTT_URL: 'mqtt://cloud:secret@broker.example:1883' });
    expect(plain).toMatch(
      /^MQTT_PUBLIC_URL is unset, so controllers would be given MQTT_URL's plain mqtt:\/\/broker\.example:1883/,
    );
    expect(plain).not.toContain('secret');
    const [loopback] = production({ MQTT_URL: 'mqtts://cloud:secret@127.0.0.1:8883' });
    expect(loopback).toMatch(/^MQTT_PUBLIC_URL is unset and MQTT_URL names this machine \(127\.0\.0\.1\)/);
    expect(loopback).not.toContain('secret');
  });

  it('takes an external broker over mqtts on a public host, or with an mqtts MQTT_PUBLIC_URL', () => {
    expect(production({ MQTT_URL: 'mqtts://cloud:pw@broker.example:8883' })).toEqual([]);
    expect(
      production({
        MQTT_URL: 'mqtt://cloud:pw@127.0.0.1:1883',
        MQTT_PUBLIC_URL: 'mqtts://broker.example:8883',
      }),
    ).toEqual([]);
  });
});

describe('isLoopbackHost', () => {
  it('is this machine by name or address, and nothing else', () => {
    for (const host of ['localhost', '127.0.0.1', '127.1.2.3', '[::1]', '::1'])
      expect(isLoopbackHost(host)).toBe(true);
    for (const host of ['gate.example.com', '10.0.0.1', '0.0.0.0', '127.example.com', '[::2]'])
      expect(isLoopbackHost(host)).toBe(false);
  });
});

describe('the TLS settings', () => {
  it('turn on the TLS listener on 8883, and move the plain one to loopback', () => {
    const { mqtt } = loadCloudConfig(TLS);
    expect(mqtt).toEqual({
      kind: 'embedded',
      port: 1884,
      publicUrl: undefined,
      tls: { port: 8883, host: '0.0.0.0', certFile: TLS.MQTT_TLS_CERT_FILE, keyFile: TLS.MQTT_TLS_KEY_FILE },
      plainHost: '127.0.0.1',
    });
  });

  it('take MQTT_TLS_PORT and MQTT_PLAIN_HOST, with relative paths from the working folder', () => {
    const { mqtt } = loadCloudConfig({
      MQTT_TLS_CERT_FILE: 'certs/cert.pem',
      MQTT_TLS_KEY_FILE: 'certs/key.pem',
      MQTT_TLS_PORT: '0',
      MQTT_PLAIN_HOST: '10.0.0.5',
    });
    expect(mqtt).toMatchObject({
      tls: { port: 0, certFile: resolve('certs/cert.pem'), keyFile: resolve('certs/key.pem') },
      plainHost: '10.0.0.5',
    });
  });

  it('leave the plain listener on HOST without TLS', () => {
    expect(loadCloudConfig({}).mqtt).toMatchObject({ tls: undefined, plainHost: undefined });
  });

  it.each([
    [{ MQTT_TLS_CERT_FILE: 'c.pem' }, 'MQTT_TLS_CERT_FILE is set without MQTT_TLS_KEY_FILE: set both'],
    [{ MQTT_TLS_KEY_FILE: 'k.pem' }, 'MQTT_TLS_KEY_FILE is set without MQTT_TLS_CERT_FILE: set both'],
    [{ MQTT_TLS_PORT: '8883' }, 'MQTT_TLS_PORT is set without MQTT_TLS_CERT_FILE and MQTT_TLS_KEY_FILE'],
    [
      { ...TLS, MQTT_URL: 'mqtt://cloud:pw@b.example:1883' },
      'MQTT_TLS_CERT_FILE and MQTT_TLS_KEY_FILE are for the embedded broker',
    ],
    [{ MQTT_CA_FILE: 'ca.pem' }, 'MQTT_CA_FILE is for an external broker (MQTT_URL)'],
  ])('refuse %o with one line naming the setting', (env, line) => {
    expect(() => loadCloudConfig(env)).toThrow(ConfigError);
    expect(() => loadCloudConfig(env)).toThrow(line);
  });

  it('refuse a bad MQTT_TLS_PORT naming it', () => {
    expect(() => loadCloudConfig({ ...TLS, MQTT_TLS_PORT: '70000' })).toThrow(
      /^MQTT_TLS_PORT="70000" is not valid/,
    );
  });

  it('give an external broker its CA file', () => {
    const { mqtt } = loadCloudConfig({ MQTT_URL: 'mqtts://cloud:pw@b.example:8883', MQTT_CA_FILE: 'ca.pem' });
    expect(mqtt).toMatchObject({ kind: 'external', caFile: resolve('ca.pem') });
  });
});
