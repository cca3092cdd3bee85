import { AsyncLocalStorage } from 'node:async_hooks';
import { appendFileSync } from 'node:fs';
import { connect as mqttConnect } from 'mqtt';
import { loadConfig } from '../../device/config.js';
import { SimulatedDriver } from '../../device/drivers/simulated.js';
import { Controller } from '../../device/runtime/controller.js';

/**
 * A controller daemon (`gatelink-device run` as it is, simulated outputs) whose gate keeps a log that no
 * crash of the controller can undo: every time an output goes active, one line `<command id> <object>` is
 * appended to the gate log before the pulse goes on, as a logic analyser on the relay would see it. The
 * command id travels from the MQTT message to the output with AsyncLocalStorage, so nothing in the daemon
 * changes for it. Run as a process of its own: `node --import tsx recording-controller.ts <config> <gate log>`.
 */
const [configPath, gateLog] = process.argv.slice(2);
if (!configPath || !gateLog) throw new Error('usage: recording-controller.ts <config> <gate log>');

const commandOf = new AsyncLocalStorage<string>();
const config = loadConfig(configPath);
const driver = new SimulatedDriver({
  objects: config.objects.flatMap((object) => (object.kind === 'simulated' ? [object] : [])),
  onChange: (object, active) => {
    if (active) appendFileSync(gateLog, `${commandOf.getStore() ?? 'unknown'} ${object}\n`);
  },
});

type Emit = (event: string | symbol, ...args: unknown[]) => boolean;

const controller = new Controller(config, {
  drivers: { simulated: driver },
  reconnectMinMs: 100,
  log: (line) => console.log(line),
  connect: (url, options) => {
    const client = mqttConnect(url, options);
    const emit = client.emit.bind(client) as Emit;
    const traced: Emit = (event, ...args) =>
      event === 'message'
        ? commandOf.run(commandIdIn(args[1]), () => emit(event, ...args))
        : emit(event, ...args);
    Object.assign(client, { emit: traced });
    return client;
  },
});

function commandIdIn(payload: unknown): string {
  try {
    const id = (JSON.parse(String(payload)) as { id?: unknown }).id;
    return typeof id === 'string' ? id : 'unknown';
  } catch {
    return 'unknown';
  }
}

await controller.start();
console.log('recording controller running');
process.once('SIGTERM', () => {
  void controller.stop().finally(() => process.exit(0));
});
