import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { type ProvisionRequest, provisionRequestSchema } from '../../shared/protocol/provisioning.js';
import { DEVICE_ID } from './fixtures.js';

/** The operator's release key the stand-in cloud hands out at provisioning. */
export const RELEASE_KEY = SigningKey.generate();

/** A stand-in for the cloud's provisioning endpoint; `mqttUrl` is the broker address it hands out. */
export async function fakeCloud(commandKey: SigningKey, mqttUrl = 'mqtt://127.0.0.1:1884') {
  const requests: ProvisionRequest[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      const request = provisionRequestSchema.parse(JSON.parse(body));
      requests.push(request);
      res.setHeader('content-type', 'application/json');
      if (req.url !== '/api/device/provision' || request.code !== 'GOOD-CODE') {
        res.statusCode = 403;
        res.end(
          JSON.stringify({
            error: 'provisioning_code_invalid',
            message: 'The provisioning code is unknown.',
          }),
        );
        return;
      }
      res.end(
        JSON.stringify({
          device_id: DEVICE_ID,
          mqtt: { url: mqttUrl, username: DEVICE_ID, password: 'broker-secret' },
          topic_prefix: 'gatelink',
          command_key: commandKey.publicKey.base64,
          release_key: RELEASE_KEY.publicKey.base64,
          pairing_code: 'K7M2P9QX',
          pairing_expires_at: '2025-01-02 10:00:00',
          numbers: request.objects.map((object, index) => ({
            id: object.id,
            number_id: index + 1,
            label: object.label,
          })),
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = address && typeof address === 'object' ? address.port : 0;
  return { url: `http://127.0.0.1:${port}`, requests, close: () => new Promise((r) => server.close(r)) };
}

/** A config file in JSON for the CLI commands that read one from disk. */
export async function configJson(
  dir: string,
  cloud: SigningKey,
  device: SigningKey,
  objects: unknown[] = [{ id: 'gate', label: 'Main gate', kind: 'simulated', pulse_ms: 0 }],
): Promise<string> {
  const keyFile = join(dir, 'device-key.pem');
  if (!existsSync(keyFile)) await writeFile(keyFile, device.toPem(), { mode: 0o600 });
  return JSON.stringify({
    cloud_url: 'https://gatelink.example.com',
    device_id: DEVICE_ID,
    mqtt: { url: 'mqtts://broker.example.com', username: DEVICE_ID, password: 'x' },
    topic_prefix: 'gatelink',
    command_key: cloud.publicKey.base64,
    private_key_file: keyFile,
    state_dir: join(dir, 'state'),
    objects,
    clock: { check: 'none' },
  });
}
