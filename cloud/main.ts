import { startCloud } from './cloud.js';
import { ConfigError, loadCloudConfig } from './foundation/config.js';

/** `npm run cloud`: the cloud alone, configured by the environment (docs/design.md section 8). */
async function main(): Promise<void> {
  // What this process writes is its owner's alone (cloud/README.md, "The data folder").
  process.umask(0o077);
  const config = loadCloudConfig();
  const cloud = await startCloud({ config, program: 'npm run cloud' });
  process.stdout.write(`Gatelink cloud listening at ${cloud.baseUrl}\n`);
  process.stdout.write(
    `Database: ${'url' in config.database ? 'PostgreSQL (DATABASE_URL)' : `PGlite in ${config.dataDir}`}\n`,
  );
  process.stdout.write(`MQTT for devices: ${cloud.controllerLink.deviceUrl}\n`);
  process.stdout.write(
    cloud.operatorTokenFile
      ? `Operator token: ${cloud.operatorTokenFile}\n`
      : 'Operator token: from OPERATOR_TOKEN\n',
  );
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await cloud.stop();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error: unknown) => {
  // A bad value or a production refusal: every one of them, one line each, and nothing else.
  if (error instanceof ConfigError) {
    for (const line of error.message.split('\n')) process.stderr.write(`gatelink cloud: ${line}\n`);
    process.exit(2);
  }
  process.stderr.write(
    `gatelink cloud could not start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
