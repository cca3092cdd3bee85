import { readFileSync } from 'node:fs';

/**
 * The software version the controller reports in its state and telemetry, from the package's package.json.
 * The file is found from here upwards: this module runs from the sources (`device/`) and the build
 * (`dist/device/`) in the repository, whose package.json is `gatelink`'s, and from a board's tree (`npm run
 * build:device`), whose package.json is the controller's own (hardware/README.md, "Installing the software").
 */
const PACKAGE_NAMES = ['gatelink', '@gatelink/device'];

function packageVersion(): string {
  for (const relative of ['../package.json', '../../package.json']) {
    try {
      const found = JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (PACKAGE_NAMES.includes(found.name ?? '') && typeof found.version === 'string') return found.version;
    } catch {
      // Not at this level: try the next one up.
    }
  }
  return 'unknown';
}

export const VERSION: string = packageVersion();
