import { createRequire } from 'node:module';

/** The software version the controller reports in its state and telemetry (from package.json). */
export const VERSION: string = (createRequire(import.meta.url)('../package.json') as { version: string })
  .version;
