import type { FastifyInstance } from 'fastify';
import { textField } from '../../foundation/web/form-input.js';
import { sendPage } from '../../foundation/web/page.js';
import { pageContext, signedIn } from '../../foundation/web/web-deps.js';
import { isTimeZone } from '../../foundation/zones/wall-clock.js';
import { startPhoneSetup } from '../../rules/devices/phone-setups.js';
import type { CustomerPagesDeps } from './customer-pages-context.js';
import { PhoneSetupPage } from './phone-setup-page.js';

/**
 * A customer sets up their own phone as the controller of a gate that opens on a call (docs/design.md section
 * 9.3): the page, and the form that starts a set-up and shows its command once. Only the barrier's owner-to-be
 * is here, so any signed-in customer may; a household member adds nothing to someone else's account this way.
 */
export async function phoneSetupRoutes(app: FastifyInstance, deps: CustomerPagesDeps): Promise<void> {
  const { ctx } = deps;

  app.get('/barriers/phone', async (request, reply) => {
    if (!signedIn(request, reply)) return reply;
    return sendPage(reply, <PhoneSetupPage page={pageContext(request, reply)} />);
  });

  app.post('/barriers/phone', async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const zone = textField(request.body, 'time_zone').slice(0, 64);
    const setup = await startPhoneSetup(ctx, {
      customerId: customer.customerId,
      timeZone: isTimeZone(zone) ? zone : undefined,
    });
    const command = phoneInstallCommand(ctx.baseUrl(), setup.provisioning_code);
    const shown = { command, expiresAt: new Date(setup.expires_at) };
    return sendPage(reply, <PhoneSetupPage page={pageContext(request, reply)} shown={shown} />);
  });
}

/** The one command pasted into Termux: the cloud's installer for phones, given the set-up code. */
export function phoneInstallCommand(baseUrl: string, code: string): string {
  return `curl -fsSL ${baseUrl}/api/device/install/phone | sh -s -- ${code}`;
}
