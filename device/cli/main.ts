import { parseArgs } from 'node:util';
import { VERSION } from '../version.js';
import { asCliError, cliError, DEFAULT_CONFIG } from './cli-error.js';

const USAGE = `gatelink-device ${VERSION}: the Gatelink barrier controller

Usage:
  gatelink-device run       [--config F]
      Runs the controller daemon (systemd starts this).
  gatelink-device provision --cloud URL --code CODE [--config F] [--objects-from F] [--state-dir D]
                            [--ca-file F] [--mqtt-insecure]
      Creates this controller's key, registers it with the cloud, writes the config file and prints the
      pairing code for the customer. The objects (relays, GSM numbers) come from --objects-from, or from an
      existing config file. --ca-file: the PEM CA (or bundle) that signed the broker's certificate, written
      as mqtt.ca_file and trusted for the cloud's https too. --mqtt-insecure: allow plain mqtt:// to a broker
      on a trusted network.
  gatelink-device provision --phone --cloud URL --code CODE [--number N] [--label L] [--config F]
                            [--state-dir D]
      The same for a phone in Termux that calls a gate which opens for its number, with the set-up code
      from the customer's barriers page: asks for the gate's number and a name (or takes --number and
      --label), and pairs the phone to that customer's account.
  gatelink-device test      [--config F] [--object ID]
      Opens each object once, locally, and says what happened. Stop the daemon first.
  gatelink-device status    [--config F] [--json]
      Shows connection, clock sync, last command, the acknowledgements waiting to be sent, and the
      pairing code while no customer has added this controller.
  gatelink-device pairing-code [--config F]
      Asks the cloud for this controller's pairing code (a fresh one once the last has expired).
  gatelink-device reset     [--config F] [--yes]
      Deletes this controller's key, config and state folder, to provision it again. Stop the daemon first.

The config file defaults to ${DEFAULT_CONFIG} (or $GATELINK_DEVICE_CONFIG).`;

/** Runs one CLI invocation and resolves with the process exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'run':
        // Each command's modules are loaded when it runs: the daemon starts with none of the others'
        // (docs/design.md section 12.1).
        return await (await import('./run.js')).runCommand(options(rest, {}).config);
      case 'provision': {
        const o = options(rest, {
          cloud: { type: 'string' },
          code: { type: 'string' },
          'objects-from': { type: 'string' },
          'state-dir': { type: 'string' },
          'ca-file': { type: 'string' },
          'mqtt-insecure': { type: 'boolean' },
          phone: { type: 'boolean' },
          number: { type: 'string' },
          label: { type: 'string' },
        });
        if (!o.values.cloud || !o.values.code) throw cliError('provision_arguments_missing');
        const { provisionCommand } = await import('./provision.js');
        const phoneGate = o.values.phone
          ? await (await import('./phone-gate.js')).askPhoneGate(
              { number: o.values.number, label: o.values.label },
              { input: process.stdin, output: process.stdout },
            )
          : undefined;
        return await provisionCommand({
          phoneGate,
          cloud: o.values.cloud,
          code: o.values.code,
          configPath: o.config,
          objectsFrom: o.values['objects-from'],
          stateDir: o.values['state-dir'],
          caFile: o.values['ca-file'],
          mqttInsecure: o.values['mqtt-insecure'],
        });
      }
      case 'test': {
        const o = options(rest, { object: { type: 'string' } });
        const { testCommand } = await import('./test.js');
        return await testCommand({ configPath: o.config, objectId: o.values.object });
      }
      case 'status': {
        const o = options(rest, { json: { type: 'boolean' } });
        const { statusCommand } = await import('./status.js');
        return await statusCommand({ configPath: o.config, json: o.values.json ?? false });
      }
      case 'pairing-code': {
        const o = options(rest, {});
        const { pairingCodeCommand } = await import('./pairing-code.js');
        return await pairingCodeCommand({ configPath: o.config });
      }
      case 'reset': {
        const o = options(rest, { yes: { type: 'boolean' } });
        const { resetCommand } = await import('./reset.js');
        return await resetCommand({ configPath: o.config, yes: o.values.yes ?? false });
      }
      case '--version':
      case 'version':
        console.log(VERSION);
        return 0;
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        console.log(USAGE);
        return command === undefined ? 2 : 0;
      default:
        throw cliError('unknown_command', { command });
    }
  } catch (error) {
    return report(error);
  }
}

type Spec = Record<string, { type: 'string' } | { type: 'boolean' }>;

function options<S extends Spec>(args: readonly string[], spec: S) {
  try {
    const parsed = parseArgs({
      args: [...args],
      options: { config: { type: 'string' }, ...spec },
      strict: true,
      allowPositionals: false,
    });
    const values = parsed.values as {
      [K in keyof S]?: S[K] extends { type: 'boolean' } ? boolean : string;
    } & {
      config?: string;
    };
    return { values, config: values.config ?? process.env.GATELINK_DEVICE_CONFIG ?? DEFAULT_CONFIG };
  } catch (error) {
    throw cliError('bad_options', { problem: (error as Error).message });
  }
}

function report(error: unknown): number {
  const failure = asCliError(error);
  console.error(`gatelink-device: ${failure.message}`);
  return failure.exitCode;
}
