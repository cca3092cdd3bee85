// Part of `npm run bench -- fleet`: one process of the fleet, running several controllers with the compiled
// controller runtime (dist/device, as `gatelink-device run` does), each from its own provisioned config with
// simulated outputs. Started with plain node by fleet.ts; told what to run over IPC.
import { prepareController } from '../../dist/device/runtime/prepare.js';

const running = [];

async function start(configs) {
  for (const path of configs) {
    const { controller } = await prepareController(path, { log: () => {} });
    await controller.start();
    running.push(controller);
  }
}

process.on('message', (message) => {
  if (message.type === 'start') {
    start(message.configs).then(
      () => process.send({ type: 'ready', controllers: running.length }),
      (error) => process.send({ type: 'failed', message: String(error?.stack ?? error) }),
    );
  } else if (message.type === 'stop') {
    Promise.allSettled(running.map((controller) => controller.stop())).then(() => process.exit(0));
  }
});
process.send({ type: 'listening' });
