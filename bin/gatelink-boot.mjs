#!/usr/bin/env node
// The boot guard (docs/design.md section 12.4.3): systemd runs it from the known-good release,
//   node /opt/gatelink/known-good/bin/gatelink-boot.mjs --home /opt/gatelink run --config /etc/gatelink/device.yaml
// It counts the starts of a release on trial, goes back to known-good after too many, then runs
// <home>/current/bin/gatelink-device.mjs with the remaining arguments in this same process.
import { pathToFileURL } from 'node:url';

const { guardBoot, BootUsageError } = await import(
  new URL('../dist/device/boot/guard.js', import.meta.url).href
);
let plan;
try {
  plan = guardBoot(process.argv.slice(2));
} catch (error) {
  process.stderr.write(
    `gatelink-boot: ${error instanceof BootUsageError ? error.message : (error?.stack ?? error)}\n`,
  );
  process.exit(2);
}
process.env.GATELINK_HOME = plan.home;
process.argv = [process.argv[0], plan.program, ...plan.args];
await import(pathToFileURL(plan.program).href);
