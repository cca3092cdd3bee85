#!/usr/bin/env node
// `gatelink-company`, the companies' tool, runs compiled JavaScript
// (dist/, made by `npm run build`): no TypeScript loader in production (docs/design.md section 12.3).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = new URL('../dist/company/main.js', import.meta.url);
if (!existsSync(main)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  process.stderr.write(`gatelink-company: not built yet: run "npm run build" in ${root}, then try again.\n`);
  process.exit(1);
}
await import(main.href);
