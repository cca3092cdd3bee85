import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControllerLink } from '../../cloud/links/controllers/controller-link.js';
import {
  BrokerEnv,
  brokerKindSkipReason,
  dispatch,
  dispatchRequest,
  insertOpenEntry,
} from '../support/broker-env.js';
import { makeTestCa, type TestCa } from '../support/test-ca.js';

/*
 * The shipped RabbitMQ recipe's TLS (deploy/rabbitmq/README.md, "TLS"), on a single node: controllers on the
 * TLS listener, the cloud on plain MQTT on loopback, or over mqtts:// with MQTT_CA_FILE.
 */
const skip = brokerKindSkipReason('cluster');

describe.skipIf(skip !== null)('a RabbitMQ node with its TLS listener', () => {
  let env: BrokerEnv;
  let ca: TestCa;
  let broker: ControllerLink;

  beforeAll(async () => {
    ca = await makeTestCa('Broker CA');
    const pair = await ca.issue(['127.0.0.1']);
    env = await BrokerEnv.open('cluster', {
      cluster: { nodes: 1, tls: { certFile: pair.certFile, keyFile: pair.keyFile, caFile: ca.certFile } },
    });
    broker = await env.start();
  });
  afterAll(async () => {
    await env?.close();
    ca?.remove();
  });

  const cluster = () => {
    if (!env.cluster) throw new Error('no cluster');
    return env.cluster;
  };

  it('takes controllers over mqtts:// while the cloud uses the plain listener on loopback', async () => {
    const node = cluster().nodes[0];
    expect(new URL(cluster().cloudUrl()).port).toBe(String(node?.mqttPort));
    expect(broker.deviceUrl).toBe(`mqtts://127.0.0.1:${node?.tlsPort}`);
    const device = await env.onlineDevice(broker, { ca: ca.cert });
    const entry = await insertOpenEntry(env.db, device.id);
    const result = dispatch(broker, dispatchRequest(device.id, entry));
    const ack = await device.ack(await device.nextCommand());
    expect(await result).toEqual({ kind: 'acked', ack });
  });

  it('lets the cloud connect over mqtts:// with MQTT_CA_FILE', async () => {
    const plain = new URL(cluster().cloudUrl());
    const url = `mqtts://${plain.username}:${plain.password}@127.0.0.1:${cluster().nodes[0]?.tlsPort}`;
    const overTls = await env.start(
      { connectTimeoutMs: 15_000 },
      { MQTT_URL: url, MQTT_CA_FILE: ca.certFile },
    );
    expect(overTls.linked()).toBe(true);
    await env.stopBroker(overTls);
  });
});
