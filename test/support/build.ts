import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Vitest's global setup: builds the controller (`npm run build`, tsc into dist/) once before the suites, so that
 * every suite that starts bin/gatelink-device.mjs runs the code as it is now, as a controller runs it. The build
 * is incremental: a second run with nothing changed takes about as long as starting tsc.
 */
export default function buildController(): void {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
}
