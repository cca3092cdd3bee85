import { startCloud } from '../../cloud/cloud.js';
import { loadCloudConfig } from '../../cloud/foundation/config.js';

/**
 * `npm run cloud` as the event delivery's restart suite needs it (test/chaos/events-restart.test.ts): configured
 * by the environment, with callbacks allowed to loopback and a short attempt timeout, so that the leases a
 * killed process leaves end within seconds. It prints what cloud/main.ts prints, and stops on SIGTERM.
 */
const config = loadCloudConfig();
const cloud = await startCloud({
  config,
  program: 'events test cloud',
  eventDelivery: { allowPrivateAddresses: true, timeoutMs: 1000, turnMs: 500, pollMs: 200 },
});
process.stdout.write(`Gatelink cloud listening at ${cloud.baseUrl}\n`);
process.stdout.write(`MQTT for devices: ${cloud.controllerLink.deviceUrl}\n`);
process.on('SIGTERM', () => {
  void cloud.stop().then(() => process.exit(0));
});
