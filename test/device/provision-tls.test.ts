import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { createServer as createHttpsServer, type Server } from 'node:https';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CliError } from '../../device/cli/cli-error.js';
import { main } from '../../device/cli/main.js';
import { provision } from '../../device/cli/provision.js';
import { loadConfig } from '../../device/config.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { makeTestCa, type TestCa } from '../support/test-ca.js';
import { tempDir } from './fixtures.js';
import { fakeCloud } from './provision-fixtures.js';

const OBJECTS_YAML = `
objects:
  - id: gate
    label: Main gate
    kind: simulated
    pulse_ms: 0
clock:
  check: none
`;

/** An HTTPS front for a plain cloud, as a reverse proxy with the operator's certificate stands before one. */
async function httpsFront(target: string, cert: { cert: string; key: string }) {
  const server: Server = createHttpsServer(cert, (req, res) => {
    const upstream = httpRequest(
      new URL(req.url ?? '/', target),
      { method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = address && typeof address === 'object' ? address.port : 0;
  return {
    url: `https://localhost:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * `gatelink-device provision --ca-file` (docs/design.md section 9): one PEM file, trusted for the cloud's https
 * during provisioning and written as the broker's `mqtt.ca_file`; a cloud certificate that does not verify is
 * one line naming the host and the option.
 */
describe('gatelink-device provision over https', () => {
  let ca: TestCa;
  let brokerCa: TestCa;
  let dir: string;
  let cleanup: () => Promise<void>;
  let cloudKey: SigningKey;
  let cloud: Awaited<ReturnType<typeof fakeCloud>>;
  let front: Awaited<ReturnType<typeof httpsFront>>;

  beforeAll(async () => {
    [ca, brokerCa] = await Promise.all([makeTestCa('Cloud CA'), makeTestCa('Broker CA')]);
  });
  afterAll(() => {
    ca.remove();
    brokerCa.remove();
  });
  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    cloudKey = SigningKey.generate();
    cloud = await fakeCloud(cloudKey, 'mqtts://gate.example.com:8883');
    front = await httpsFront(cloud.url, await ca.issue(['localhost']));
    await writeFile(join(dir, 'objects.yaml'), OBJECTS_YAML);
    await writeFile(join(dir, 'bundle.pem'), `${ca.cert}\n${brokerCa.cert}`);
  });
  afterEach(async () => {
    await front.close();
    await cloud.close();
    await cleanup();
  });

  it('trusts --ca-file for the cloud and writes it as mqtt.ca_file', async () => {
    const configPath = join(dir, 'etc', 'device.yaml');
    const code = await main([
      'provision',
      '--cloud',
      front.url,
      '--code',
      'GOOD-CODE',
      '--config',
      configPath,
      '--objects-from',
      join(dir, 'objects.yaml'),
      '--ca-file',
      join(dir, 'bundle.pem'),
    ]);
    expect(code).toBe(0);
    const config = loadConfig(configPath);
    expect(config.mqtt.ca_file).toBe(join(dir, 'bundle.pem'));
    expect(config.mqtt.url).toBe('mqtts://gate.example.com:8883');
    expect(config.cloud_url).toBe(front.url);
  });

  it('[attack:provisioning.cloud-impostor] without --ca-file says in one line that the cloud certificate does not verify, and writes nothing', async () => {
    const configPath = join(dir, 'device.yaml');
    const attempt = provision({
      cloud: front.url,
      code: 'GOOD-CODE',
      configPath,
      objectsFrom: join(dir, 'objects.yaml'),
    });
    await expect(attempt).rejects.toThrow(CliError);
    const error = await attempt.catch((failure: CliError) => failure);
    expect(error).toMatchObject({ code: 'cloud_certificate' });
    expect((error as CliError).message).toMatch(
      /^the cloud's certificate for localhost does not verify: .+ \([A-Z_]+\); pass --ca-file with the CA that signed it/,
    );
    expect((error as CliError).message).not.toContain('\n');
    expect(cloud.requests).toHaveLength(0);
    expect(existsSync(configPath)).toBe(false);
  });

  it('refuses a --ca-file that holds no certificate before the code is spent', async () => {
    await writeFile(join(dir, 'empty.pem'), 'nothing here\n');
    const attempt = provision({
      cloud: front.url,
      code: 'GOOD-CODE',
      configPath: join(dir, 'device.yaml'),
      objectsFrom: join(dir, 'objects.yaml'),
      caFile: join(dir, 'empty.pem'),
    });
    await expect(attempt).rejects.toThrow(
      /--ca-file \S+empty\.pem cannot be used: it holds no PEM certificate/,
    );
    expect(cloud.requests).toHaveLength(0);
  });

  it('refuses a plain broker off the board the cloud hands out, unless --mqtt-insecure', async () => {
    await cloud.close();
    cloud = await fakeCloud(cloudKey, 'mqtt://gate.example.com:1883');
    const plain = (configPath: string, mqttInsecure?: boolean) =>
      provision({
        cloud: cloud.url,
        code: 'GOOD-CODE',
        configPath,
        objectsFrom: join(dir, 'objects.yaml'),
        mqttInsecure,
      });
    await expect(plain(join(dir, 'refused.yaml'))).rejects.toThrow(/mqtt\.url: .*in the clear/);
    const { config } = await plain(join(dir, 'device.yaml'), true);
    expect(loadConfig(config.config_file).mqtt.insecure).toBe(true);
  });
});
