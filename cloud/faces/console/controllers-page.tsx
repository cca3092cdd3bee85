import type { VNode } from 'preact';
import type { PageContext } from '../../foundation/web/page.js';
import { Moment } from '../../foundation/web/readable-time.js';
import type { listDevices } from '../../rules/devices/devices.js';
import type { ConsoleOperator } from './console-access.js';
import { ConsoleFrame } from './console-frame.js';

/**
 * `/console/controllers` (docs/design.md section 12.4.2): the fleet as `gatelink-admin device list` shows it:
 * each controller's version, arch, last report, whether it is online, and its progress in its newest rollout,
 * with the reason when it rolled back.
 */
export type FleetRow = Awaited<ReturnType<typeof listDevices>>[number];

export function ControllersPage(props: {
  page: PageContext;
  operator: ConsoleOperator;
  devices: FleetRow[];
}): VNode {
  return (
    <ConsoleFrame page={props.page} operator={props.operator} section="controllers" title="Controllers">
      <h2 class="section-title">Controllers</h2>
      <section class="card" aria-label="Controllers">
        {props.devices.length === 0 ? (
          <p class="muted">No controller yet: add one with gatelink-admin device add.</p>
        ) : (
          <ul class="list">
            {props.devices.map((device) => (
              <li key={device.id} class="row">
                <div class="grow">
                  <div>
                    {device.label} <span class="muted small">{device.id}</span>
                  </div>
                  <div class="muted small">
                    {device.online ? 'online' : 'offline'} · {device.version ?? 'version unknown'} ·{' '}
                    {device.arch ?? 'arch unknown'} · last seen{' '}
                    {device.last_seen ? <Moment date={new Date(device.last_seen)} /> : 'never'}
                    {device.provisioned ? '' : ' · not provisioned'}
                  </div>
                  {device.update ? (
                    <div class="small">
                      Rollout {device.update.rollout_id}: {device.update.state.replace('_', ' ')}
                      {device.update.reason ? ` (${device.update.reason})` : ''}
                      {device.update.detail ? `: ${device.update.detail}` : ''}
                    </div>
                  ) : null}
                </div>
              </li>
            ))}
          </ul>
        )}
      </section>
    </ConsoleFrame>
  );
}
