import { DEFAULT_CONFIG } from './cli-error.js';

/**
 * What to do after provisioning, for the config where it was written (hardware/README.md): the systemd unit
 * reads /etc/gatelink/device.yaml, so only a config there is started by `systemctl enable`; a config anywhere
 * else is run with its --config, or the unit is pointed at it. Commands are shown as the installer ran this
 * one: `npm run device -- ...` from a checkout (npm names the script in npm_lifecycle_event), else
 * `gatelink-device ...`.
 */
export function nextSteps(configPath: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const program = env.npm_lifecycle_event === 'device' ? 'npm run device --' : 'gatelink-device';
  if (configPath === DEFAULT_CONFIG) {
    return [
      `Next: ${program} test (each object opens once), then`,
      '      sudo systemctl enable --now gatelink-device, then',
      `      ${program} status`,
    ];
  }
  const config = shellWord(configPath);
  return [
    `Next: ${program} test --config ${config}   (each object opens once)`,
    `      ${program} run --config ${config}    (the controller, until Ctrl-C)`,
    `The systemd unit reads ${DEFAULT_CONFIG}; to have it run this config instead:`,
    '      sudo systemctl edit gatelink-device   and add:',
    '        [Service]',
    '        ExecStart=',
    `        ExecStart=/usr/bin/node /opt/gatelink/known-good/bin/gatelink-boot.mjs --home /opt/gatelink run --config ${config}`,
  ];
}

/** A path as one shell word: quoted when it holds anything a shell would split or expand. */
function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}
