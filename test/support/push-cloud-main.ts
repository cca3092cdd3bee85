import { startCloud } from '../../cloud/cloud.js';
import { loadCloudConfig } from '../../cloud/foundation/config.js';

/**
 * `npm run cloud` as the push outbox's kill suite needs it (test/chaos/push-outbox-kill.test.ts): configured by
 * the environment (GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS lets the loopback push service through), with a short
 * attempt timeout and small batches, so that the leases a killed process leaves end within seconds rather than
 * a minute. It prints what cloud/main.ts prints, and stops on SIGTERM.
 */
const config = loadCloudConfig();
const cloud = await startCloud({
  config,
  program: 'push test cloud',
  pushDelivery: { timeoutMs: 1000, pollMs: 200, batchSize: 8, concurrency: 4 },
  eventDelivery: false,
  mailDelivery: false,
});
process.stdout.write(`Gatelink cloud listening at ${cloud.baseUrl}\n`);
process.stdout.write(`MQTT for devices: ${cloud.controllerLink.deviceUrl}\n`);
process.on('SIGTERM', () => {
  void cloud.stop().then(() => process.exit(0));
});
