import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait-for.js';
import { openingsLogged, type ProvisionedController } from './controller-host.js';
import {
  controllerOnline,
  copyFolder,
  createDeployment,
  type Deployment,
  deploymentMissing,
  grantOnThePhone,
} from './deployment.js';
import type { SpawnedProcess } from './network.js';
import { backupServer, restoreServer } from './server-backup.js';

/**
 * A server lost and made again from its backup (issue "Production: TLS on every link"): the database
 * (pg_dump), the service key, the operator token and Caddy's data are saved, the server's host is deleted with
 * everything on it, a fresh host at the same address gets a new PostgreSQL into which the dump is restored, and
 * the cloud starts again. The controller, never touched, reconnects with the credentials and command key it
 * was provisioned with, and the company's key opens again.
 */
describe.skipIf(deploymentMissing())('a server restored from its backup', () => {
  let deployment: Deployment;
  let controller: ProvisionedController;
  let daemon: SpawnedProcess;
  let grant: Awaited<ReturnType<typeof grantOnThePhone>>;
  let configBefore: string;

  beforeAll(async () => {
    deployment = await createDeployment();
    await deployment.startServer({
      dataDir: join(deployment.work, 'cloud-data'),
      caddyData: join(deployment.work, 'caddy'),
    });
    ({ controller, daemon } = await deployment.startController());
    configBefore = readFileSync(controller.configFile, 'utf8');
    const browser = await deployment.launchPhone();
    grant = await grantOnThePhone(deployment.server.site, browser, controller);
    await browser.close();
  }, 110_000);

  afterAll(async () => {
    await deployment?.remove();
  });

  const open = (actor: string) =>
    deployment.server.site.call('open', {
      ...grant.company,
      key_ref: grant.keyRef,
      number_id: controller.gateNumberId,
      actor,
    });

  it('opens before the loss', async () => {
    const opened = await open('Before the loss');
    expect(opened.body).toMatchObject({ ok: 1 });
    await waitFor(() => openingsLogged(daemon) === 1, 'the controller to log the opening');
  });

  it('opens again through the same controller after the server is rebuilt from its backup', async () => {
    const backup = join(deployment.work, 'backup');
    await backupServer(deployment.lab, deployment.server, backup);
    copyFolder(deployment.server.caddy.dataHome, join(backup, 'caddy'));
    await deployment.destroyServer();
    await daemon.waitFor(/mqtt: connection lost/, 'the controller to lose the server', 30_000);

    // Caddy's data comes back with the rest, so the phone's and the controller's trust holds.
    const caddyData = join(deployment.work, 'restored-caddy');
    copyFolder(join(backup, 'caddy'), caddyData);
    await deployment.startServer({
      dataDir: join(deployment.work, 'restored-data'),
      caddyData,
      restore: (host, settings) => restoreServer(deployment.lab, host, settings, backup),
    });
    await daemon.waitFor(/connection lost[\s\S]*mqtt: connected to/, 'the controller to reconnect', 45_000);
    // The controller reaches the broker directly; the site's proxy may still be starting on a busy machine.
    await waitFor(
      () => controllerOnline(deployment.server.site),
      'the cloud to show the controller online',
      undefined,
      { retryErrors: true },
    );
    const opened = await open('After the restore');
    expect(opened.status, JSON.stringify(opened.body)).toBe(200);
    expect(opened.body).toMatchObject({ ok: 1 });
    await waitFor(() => openingsLogged(daemon) === 2, 'the controller to log the second opening');
    // The controller was neither provisioned again nor given new credentials or a new command key.
    expect(readFileSync(controller.configFile, 'utf8')).toBe(configBefore);
    const journal = await deployment.server.site.ops('GET', `/ops/journal?company=${grant.company.org_id}`);
    expect(JSON.stringify(journal.body.entries)).toContain('Before the loss');
    expect(JSON.stringify(journal.body.entries)).toContain('After the restore');
  }, 100_000);
});
