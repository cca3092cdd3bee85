import { prepareController } from '../runtime/prepare.js';

/**
 * `gatelink-device run`: the daemon. Reads the config once, starts the controller and runs until SIGTERM or
 * SIGINT, then stops the components in order (the outputs end released). An unexpected exception still
 * releases the outputs before the process exits, so that systemd restarts it from a safe state. Under systemd
 * the controller also reports readiness, status and watchdog pings (hardware/README.md, "The daemon under
 * systemd").
 */
export async function runCommand(configPath: string): Promise<number> {
  // Connects to the broker first, and loads the rest meanwhile (docs/design.md section 12.1).
  let restart: (reason: 'update') => void = () => undefined;
  const restarting = new Promise<'update'>((resolve) => {
    restart = resolve;
  });
  const { config, controller } = await prepareController(configPath, {
    log: (line) => console.log(line),
    // An update switched releases: stop as for SIGTERM (outputs released); systemd starts `current` again.
    onRestart: () => restart('update'),
  });
  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= controller.stop();
    return stopping;
  };
  const crash = (error: unknown) => {
    console.error(`gatelink-device: unexpected failure: ${(error as Error)?.stack ?? String(error)}`);
    void stop().finally(() => process.exit(1));
  };
  process.on('uncaughtException', crash);
  process.on('unhandledRejection', crash);

  // Listening before start: systemd may send SIGTERM as soon as the daemon says READY=1, and Node's default
  // action would end it without releasing the outputs.
  const signalled = new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  await controller.start();
  console.log(`gatelink-device: running as ${config.device_id} with ${config.objects.length} object(s)`);
  const signal = await Promise.race([signalled, restarting]);
  console.log(`gatelink-device: ${signal}, stopping`);
  await stop();
  console.log('gatelink-device: stopped, outputs released');
  return 0;
}
