import type { VNode } from 'preact';
import { ChangeForm } from '../../foundation/web/change-form.js';
import { describedBy, FieldError } from '../../foundation/web/field-errors.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import type { PageContext } from '../../foundation/web/page.js';
import type { Company } from '../../rules/companies/companies.js';
import { companyDisplay } from '../../rules/companies/display.js';
import { MAX_LOGO_SIDE } from '../../rules/logos/logo-image.js';
import { logoPath } from '../../rules/logos/logo-store.js';
import { CompanyMark } from '../customer-pages/company-mark.js';
import { CompanyFrame, companyPath } from './company-frame.js';

/**
 * `/company/<id>/logo` (docs/design.md section 11.3): the logo customers see beside the company's name, the
 * rules a file must meet in plain words, the upload and the removal. Any member may change it.
 */
export interface LogoPageProps {
  page: PageContext;
  company: Company;
  notice?: string | undefined;
  errors?: FieldErrors | undefined;
}

export function LogoPage(props: LogoPageProps): VNode {
  const { company } = props;
  const action = companyPath(company, 'logo');
  return (
    <CompanyFrame
      page={props.page}
      company={company}
      section="logo"
      title="Logo"
      notice={props.notice}
      errors={props.errors}
    >
      <section class="card" aria-labelledby="current-title">
        <h3 id="current-title">Your logo now</h3>
        {company.logo_hash ? (
          <img
            class="logo-preview"
            src={logoPath(company.logo_hash)}
            alt={`Logo of ${company.name}`}
            width={128}
            height={128}
          />
        ) : (
          <p>No logo yet: customers see the first letter of your name in its place.</p>
        )}
        <Audience company={company} />
        {company.logo_hash ? (
          <ChangeForm page={props.page} action={`${action}/remove`} class="actions">
            <button type="submit" class="secondary">
              Remove the logo
            </button>
          </ChangeForm>
        ) : null}
      </section>
      {props.page.lookOnly ? null : (
        <section class="card" aria-labelledby="upload-title">
          <h3 id="upload-title">{company.logo_hash ? 'Upload a new logo' : 'Upload your logo'}</h3>
          <ul id="logo-hint" class="rules">
            <li>A PNG, JPEG or WebP file of at most 1 MiB. SVG, GIF and other formats are not accepted.</li>
            <li>
              Square: the sides may differ by at most 2 %. 512 × 512 pixels is ideal; at most {MAX_LOGO_SIDE}{' '}
              × {MAX_LOGO_SIDE}.
            </li>
            <li>A still image, not an animation.</li>
            <li>
              Gatelink makes a 256 × 256 copy and removes everything but the picture (camera, place, names)
              before customers see it.
            </li>
          </ul>
          <ChangeForm page={props.page} action={action} enctype="multipart/form-data">
            <label for="logo">Logo image</label>
            <FieldError errors={props.errors} field="logo" />
            <input
              type="file"
              id="logo"
              name="logo"
              accept="image/png,image/jpeg,image/webp"
              aria-describedby={describedBy('logo', props.errors)}
              aria-invalid={props.errors?.logo ? 'true' : undefined}
            />
            <p class="actions">
              <button type="submit">Upload</button>
            </p>
          </ChangeForm>
        </section>
      )}
    </CompanyFrame>
  );
}

/**
 * Who sees it: customers are shown a company's logo only beside a verified domain (docs/design.md
 * section 11.3); a company calling with a secret is shown by its name alone.
 */
function Audience(props: { company: Company }): VNode {
  const { company } = props;
  if (!company.domain) {
    return (
      <p class="muted">
        Customers see logos only of companies with a confirmed domain. Your company calls with an id and a
        secret, so customers see your name alone, with the note that your domain is not confirmed.
      </p>
    );
  }
  const display = companyDisplay(company);
  if (!display.verifiedDomain) {
    return (
      <p class="muted">
        Customers will see it beside your domain once an operator has approved your company and confirmed the
        key on your domain.
      </p>
    );
  }
  return (
    <>
      <p class="muted">Customers see your company like this when you ask for access:</p>
      <CompanyMark company={display} />
    </>
  );
}
