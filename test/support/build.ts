import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Vitest's global setup: builds everything (`npm run build`: tsc into dist/, and the cloud's files that are not
 * TypeScript copied beside it) once before the suites, so that every suite that starts a program from bin/ runs
 * the code as it is now, as production runs it. One build for all: the controller, the cloud, `gatelink-admin`,
 * `gatelink-company` and the client package. It is incremental: a second run with nothing changed takes about as
 * long as starting tsc.
 */
export default function build(): void {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  execFileSync(process.execPath, ['packaging/compile.mjs'], { cwd: root, stdio: 'inherit' });
}
