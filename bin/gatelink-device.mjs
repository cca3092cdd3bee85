#!/usr/bin/env node
// The controller runs compiled JavaScript: dist/, made by `npm run build` in the repository, and already in a
// board's tree (`npm run build:device`): no TypeScript compiler at run time on a small board (hardware/README.md,
// "Installing the software").
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = new URL('../dist/device/main.js', import.meta.url);
if (!existsSync(main)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  process.stderr.write(`gatelink-device: not built yet: run "npm run build" in ${root}, then try again.\n`);
  process.exit(1);
}
await import(main.href);
