import { readFileSync } from 'node:fs';

/**
 * The software version the controller reports in its state and telemetry, from the package's package.json.
 * The file is found from here upwards: this module runs from the sources (`device/`) in development and from
 * the build (`dist/device/`) on a controller (hardware/README.md, "Installing the software").
 */
function packageVersion(): string {
  for (const relative of ['../package.json', '../../package.json']) {
    try {
      const found = JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (found.name === 'gatelink' && typeof found.version === 'string') return found.version;
    } catch {
      // Not at this level: try the next one up.
    }
  }
  return 'unknown';
}

export const VERSION: string = packageVersion();
