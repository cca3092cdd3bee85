import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DEMO_BARRIER, objectsYaml, SPARE_BARRIER } from '../../cloud/demo/controller.js';
import { validateConfig } from '../../device/config.js';
import { keys, makeConfig, tempDir } from './fixtures.js';

describe("the demo controllers' objects files", () => {
  it('give the demo barrier a gate that closes by itself and a door that stays open', async () => {
    const { dir, cleanup } = await tempDir();
    const base = await makeConfig(dir, { cloudKey: keys().cloud, deviceKey: keys().device });
    const objects = (spec: typeof DEMO_BARRIER) => {
      const file = parse(objectsYaml(spec)) as { objects: unknown };
      return validateConfig({ ...stripped(base), objects: file.objects }, join(dir, 'device.yaml')).objects;
    };
    expect(objects(DEMO_BARRIER).map((o) => [o.id, o.label, o.sensor])).toEqual([
      [
        'gate',
        'Main gate',
        { type: 'simulated', mode: 'auto-close', open_after_ms: 1500, close_after_ms: 20_000, stuck: false },
      ],
      [
        'garage',
        'Garage door',
        { type: 'simulated', mode: 'toggle', open_after_ms: 1500, close_after_ms: 20_000, stuck: false },
      ],
    ]);
    expect(objects(SPARE_BARRIER).every((o) => o.kind === 'simulated')).toBe(true);
    await cleanup();
  });
});

/** The config as a file would hold it: without the paths that loading adds. */
function stripped(config: Awaited<ReturnType<typeof makeConfig>>) {
  const { config_file: _file, outbox_dir: _outbox, ...rest } = config;
  return JSON.parse(JSON.stringify(rest));
}
