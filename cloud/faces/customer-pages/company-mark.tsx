import type { VNode } from 'preact';
import { type CompanyDisplay, companyInitial } from '../../rules/companies/display.js';

/** The company's logo, or its initial until it has one (docs/design.md section 10): beside every mention. */
export function CompanyLogo(props: { company: CompanyDisplay; small?: boolean }): VNode {
  const cls = props.small ? 'logo small' : 'logo';
  if (props.company.logoUrl) {
    return (
      <img
        class={cls}
        src={props.company.logoUrl}
        alt=""
        width={props.small ? 32 : 56}
        height={props.small ? 32 : 56}
      />
    );
  }
  return (
    <span class={cls} aria-hidden="true">
      {companyInitial(props.company.name)}
    </span>
  );
}

/**
 * The company as a customer must recognise it before granting: logo, name, and the verified domain, or the
 * note that its domain is not confirmed.
 */
export function CompanyMark(props: { company: CompanyDisplay }): VNode {
  const { company } = props;
  return (
    <div class="company">
      <CompanyLogo company={company} />
      <div>
        <div class="name">{company.name}</div>
        {company.verifiedDomain ? (
          <div class="muted">
            Verified domain: <strong>{company.verifiedDomain}</strong>
          </div>
        ) : (
          <div class="muted">This company's domain is not confirmed: only its name identifies it.</div>
        )}
      </div>
    </div>
  );
}
