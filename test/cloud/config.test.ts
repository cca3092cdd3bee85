import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadCloudConfig } from '../../cloud/foundation/config.js';
import { productionRefusals } from '../../cloud/foundation/production-refusals.js';

/** The cloud's configuration (docs/design.md section 8): defaults, and one clear line for each bad value. */

describe('loadCloudConfig defaults', () => {
  const config = loadCloudConfig({});

  it('listens on 8080 with the base URL settled once the server listens', () => {
    expect(config.port).toBe(8080);
    expect(config.host).toBe('0.0.0.0');
    expect(config.baseUrl).toBeUndefined();
  });

  it('keeps the embedded database and the service key in ./.data', () => {
    expect(config.dataDir).toBe(resolve('./.data'));
    expect(config.database).toEqual({ dataDir: resolve('./.data/db') });
    expect(config.serviceKeyFile).toBe(resolve('./.data/signing-key.pem'));
  });

  it('runs the embedded broker on 1884 under the gatelink prefix', () => {
    expect(config.mqtt).toEqual({ kind: 'embedded', port: 1884, publicUrl: undefined });
    expect(config.topicPrefix).toBe('gatelink');
  });

  it('generates the operator token, limits openings to 10 a minute, and has no test switches', () => {
    expect(config.operatorToken).toBeUndefined();
    expect(config.openRateLimit).toBe(10);
    expect(config.devKeyfileUrl).toBeUndefined();
    expect(config.allowPrivateCallbacks).toBe(false);
    expect(config.production).toBe(false);
    expect(config.logLevel).toBe('info');
  });

  it('is frozen', () => {
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('takes the values it is given', () => {
    const given = loadCloudConfig({
      PORT: '9090',
      BASE_URL: 'https://gate.example.com/',
      DATABASE_URL: 'postgres://user@db.example:5432/gatelink',
      MQTT_URL: 'mqtts://broker.example:8883',
      OPERATOR_TOKEN: 'x'.repeat(32),
    });
    expect(given.port).toBe(9090);
    expect(given.baseUrl).toBe('https://gate.example.com');
    expect(given.database).toEqual({ url: 'postgres://user@db.example:5432/gatelink' });
    // Devices are given MQTT_PUBLIC_URL, or the broker's address without the cloud's own credentials.
    expect(given.mqtt).toEqual({
      kind: 'external',
      url: 'mqtts://broker.example:8883',
      publicUrl: undefined,
      clientId: `gatelink-cloud-${hostname()}-9090`,
      accounts: { kind: 'mosquitto' },
    });
    expect(given.operatorToken).toBe('x'.repeat(32));
  });
});

describe('a broker cluster', () => {
  const cluster = {
    MQTT_URL: 'mqtt://cloud:pw@node1:1883, mqtt://node2:1883,mqtt://node3:1883',
    MQTT_PUBLIC_URL: 'mqtts://a.example:8883,mqtts://b.example:8883',
    MQTT_BROKER: 'rabbitmq',
    RABBITMQ_API_URL: 'http://node1:15672,http://node2:15672',
  };

  it('takes several nodes in MQTT_URL, MQTT_PUBLIC_URL and RABBITMQ_API_URL', () => {
    const config = loadCloudConfig(cluster);
    expect(config.mqtt).toMatchObject({
      kind: 'external',
      publicUrl: cluster.MQTT_PUBLIC_URL,
      accounts: { kind: 'rabbitmq', apiUrls: ['http://node1:15672', 'http://node2:15672'] },
    });
  });

  it('stops naming the variable when one of the nodes is not a URL, or RabbitMQ has no management API', () => {
    expect(() => loadCloudConfig({ ...cluster, MQTT_URL: 'mqtt://node1:1883,node2' })).toThrow(/^MQTT_URL=/);
    expect(() => loadCloudConfig({ ...cluster, MQTT_BROKER: 'nats' })).toThrow(/^MQTT_BROKER=/);
    expect(() => loadCloudConfig({ ...cluster, RABBITMQ_API_URL: '' })).toThrow(/needs RABBITMQ_API_URL/);
  });
});

describe('the external broker session of an instance', () => {
  const external = (env: Record<string, string>) => {
    const { mqtt } = loadCloudConfig({ MQTT_URL: 'mqtt://cloud:secret@broker.example:1883', ...env });
    return mqtt.kind === 'external' ? mqtt.clientId : 'not external';
  };

  it('is named by host and HTTP port, so that a restarted instance takes up its own session', () => {
    expect(external({ PORT: '8081' })).toBe(external({ PORT: '8081' }));
    expect(external({ PORT: '8081' })).not.toBe(external({ PORT: '8082' }));
  });

  it('is new at every start when the port is chosen by the system', () => {
    expect(external({ PORT: '0' })).toBeUndefined();
  });

  it('is MQTT_CLIENT_ID when set, and a bad one stops the start naming the variable', () => {
    expect(external({ MQTT_CLIENT_ID: 'cloud-a' })).toBe('cloud-a');
    expect(() => external({ MQTT_CLIENT_ID: 'has space' })).toThrow(/MQTT_CLIENT_ID/);
  });
});

describe('a bad value stops the start with a ConfigError naming the variable', () => {
  const cases: { name: string; env: Record<string, string>; variable: string }[] = [
    { name: 'PORT=abc', env: { PORT: 'abc' }, variable: 'PORT' },
    { name: 'PORT=70000', env: { PORT: '70000' }, variable: 'PORT' },
    { name: 'DATABASE_URL=mysql://x', env: { DATABASE_URL: 'mysql://x' }, variable: 'DATABASE_URL' },
    { name: 'MQTT_URL=http://x', env: { MQTT_URL: 'http://x' }, variable: 'MQTT_URL' },
    { name: 'OPERATOR_TOKEN=short', env: { OPERATOR_TOKEN: 'short' }, variable: 'OPERATOR_TOKEN' },
    {
      name: 'GATELINK_DEV_KEYFILE_URL without {domain}',
      env: { GATELINK_DEV_KEYFILE_URL: 'http://127.0.0.1:9000/.well-known/service.json' },
      variable: 'GATELINK_DEV_KEYFILE_URL',
    },
  ];

  it.each(cases)('$name', ({ env, variable }) => {
    let thrown: unknown;
    try {
      loadCloudConfig(env);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    const message = (thrown as ConfigError).message;
    expect(message.split('\n')).toHaveLength(1);
    expect(message.startsWith(`${variable}=`)).toBe(true);
  });

  it('two bad values give one line each', () => {
    expect(() => loadCloudConfig({ PORT: 'abc', MQTT_URL: 'http://x' })).toThrow(
      expect.objectContaining({
        message: expect.stringMatching(/^(PORT=.*\nMQTT_URL=.*|MQTT_URL=.*\nPORT=.*)$/),
      }),
    );
  });
});

describe('test switches and production', () => {
  const template = 'http://127.0.0.1:9000/{domain}/.well-known/service.json';

  it('GATELINK_DEV_KEYFILE_URL is honoured outside production', () => {
    expect(loadCloudConfig({ GATELINK_DEV_KEYFILE_URL: template }).devKeyfileUrl).toBe(template);
  });

  it('[attack:config.test-switch-in-production] NODE_ENV=production with GATELINK_DEV_KEYFILE_URL set is refused', () => {
    const config = loadCloudConfig({ NODE_ENV: 'production', GATELINK_DEV_KEYFILE_URL: template });
    expect(productionRefusals(config)).toContainEqual(
      expect.stringMatching(/^GATELINK_DEV_KEYFILE_URL is set/),
    );
  });

  it('[attack:config.test-switch-in-production] NODE_ENV=production with GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS=1 is refused', () => {
    const config = loadCloudConfig({ NODE_ENV: 'production', GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS: '1' });
    expect(productionRefusals(config)).toContainEqual(
      expect.stringMatching(/^GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS=1 is set/),
    );
  });

  it('NODE_ENV=production without the switches reads as production', () => {
    expect(loadCloudConfig({ NODE_ENV: 'production' }).production).toBe(true);
  });
});
