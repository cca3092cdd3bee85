import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrokerEnv } from '../support/broker-env.js';
import { makeTestCa, type TestCa } from '../support/test-ca.js';

/*
 * The cloud's own connection to an external broker over mqtts:// (cloud/README.md, "TLS for controllers"): a
 * certificate that does not verify stops the start with a line naming it and what to do, at once rather than
 * after the connect timeout; and an MQTT_URL on this machine is no address for controllers elsewhere.
 */
describe('an external broker whose certificate does not verify', () => {
  let env: BrokerEnv;
  let ca: TestCa;
  let server: Server;
  let port: number;

  beforeAll(async () => {
    [env, ca] = await Promise.all([BrokerEnv.open('embedded'), makeTestCa('Broker CA')]);
    const pair = await ca.issue(['broker.test', '127.0.0.1']);
    // Only the handshake matters here: a TLS server that would never speak MQTT.
    server = createServer({ cert: pair.cert, key: pair.key }, (socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await env?.close();
    await new Promise((resolve) => server?.close(resolve));
    ca?.remove();
  });

  // Far longer than the refusal takes: a test that waited for the timeout would fail on its message.
  const slow = { connectTimeoutMs: 15_000 };

  it('says which certificate does not verify, why, and to set MQTT_CA_FILE', async () => {
    await expect(env.start(slow, { MQTT_URL: `mqtts://cloud:pw@127.0.0.1:${port}` })).rejects.toThrow(
      "the MQTT broker's certificate for 127.0.0.1 does not verify: unable to verify the first certificate " +
        '(UNABLE_TO_VERIFY_LEAF_SIGNATURE); set MQTT_CA_FILE to the CA that signed it',
    );
  });

  it('says when the certificate is not for the host in MQTT_URL, with the right CA', async () => {
    const other = await ca.issue(['elsewhere.test']);
    const wrongName = createServer({ cert: other.cert, key: other.key }, (socket) => socket.destroy());
    await new Promise<void>((resolve) => wrongName.listen(0, '127.0.0.1', resolve));
    try {
      const wrongPort = (wrongName.address() as AddressInfo).port;
      await expect(
        env.start(slow, { MQTT_URL: `mqtts://cloud:pw@127.0.0.1:${wrongPort}`, MQTT_CA_FILE: ca.certFile }),
      ).rejects.toThrow(
        /^the MQTT broker's certificate does not name 127\.0\.0\.1: .*\(ERR_TLS_CERT_ALTNAME_INVALID\); use in MQTT_URL/,
      );
    } finally {
      await new Promise((resolve) => wrongName.close(resolve));
    }
  });

  it('names MQTT_CA_FILE when it cannot be read', async () => {
    await expect(
      env.start(slow, {
        MQTT_URL: `mqtts://cloud:pw@127.0.0.1:${port}`,
        MQTT_CA_FILE: '/nonexistent/ca.pem',
      }),
    ).rejects.toThrow('MQTT_CA_FILE /nonexistent/ca.pem cannot be read (ENOENT)');
  });

  it('refuses in production to give controllers the loopback MQTT_URL, without MQTT_PUBLIC_URL', async () => {
    await expect(
      env.start(slow, { NODE_ENV: 'production', MQTT_URL: `mqtts://cloud:pw@127.0.0.1:${port}` }),
    ).rejects.toThrow(/^MQTT_PUBLIC_URL is unset and MQTT_URL names this machine \(127\.0\.0\.1\)/);
  });
});
