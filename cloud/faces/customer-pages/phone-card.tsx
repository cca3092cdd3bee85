import type { VNode } from 'preact';
import type { PhoneNetwork } from '../../../shared/protocol/messages.js';
import { Moment } from '../../foundation/web/readable-time.js';
import type { PhoneState } from '../../rules/devices/phone-state.js';

/**
 * How the phone stands, and whether an opening could ask the household to call the gate while it is offline
 * (`mayAskToCall`, docs/design.md section 10.9): read only for a phone that is offline, false otherwise.
 */
export type PhoneCardState = PhoneState & { callable: boolean };

/**
 * A gate that opens on a call from the customer's phone (docs/design.md section 12.6): companies open it while
 * the phone is online, and while it is offline only if someone can be asked to call the gate by hand (section
 * 10.9), so the page says how it stands, what keeps it online, and what an offline phone means for the companies.
 */
export function PhoneCard(props: { phone: PhoneCardState; online: boolean }): VNode {
  const { phone, online } = props;
  const keepOnline = 'Open Termux on it, and check that its battery use is unrestricted.';
  return (
    <section class="card" aria-labelledby="phone-title">
      <h2 id="phone-title">Your phone</h2>
      {online ? (
        <p>Online: companies you let in can open now, and your phone places the call.</p>
      ) : phone.callable ? (
        <p>
          Offline: when a company opens, you are sent a notification asking you to call the gate yourself, and
          it waits a minute for you. So that companies open without you, bring the phone back online.{' '}
          {keepOnline}
        </p>
      ) : (
        <p>
          Offline: companies cannot open until your phone is back online. {keepOnline} Meanwhile,{' '}
          <a href="/account">turn on notifications</a> to be asked to call the gate yourself when a company
          opens.
        </p>
      )}
      {phone.heardAt ? (
        <p class="muted small">
          Last heard from <Moment date={phone.heardAt} />
          {phone.battery
            ? `; battery ${phone.battery.percentage} %${phone.battery.plugged ? ', charging' : ''}`
            : ''}
          {phone.network ? `; ${networkText(phone.network)}` : ''}.
        </p>
      ) : null}
    </section>
  );
}

function networkText(network: PhoneNetwork): string {
  if (network.sim !== 'ready') return `SIM ${network.sim.replaceAll('_', ' ')}`;
  return network.operator ? `network ${network.operator}` : 'no mobile network';
}
