// Gatelink's progressive enhancement for every page (docs/design.md section 10). The pages work without it;
// with it, the application installs its service worker and asks before each action that cannot be undone.
if ('serviceWorker' in navigator) {
  window.addEventListener('load', () => {
    navigator.serviceWorker.register('/service-worker.js').catch(() => {});
  });
}

// A form with data-confirm asks first ("Withdraw access for Acme?"). Without this script it submits at once,
// which is still what the person clicked.
document.addEventListener('submit', (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement)) return;
  const question = form.dataset.confirm;
  if (question && !window.confirm(question)) event.preventDefault();
});

// A secret shown once (shown-once.tsx) gets a Copy button; without this script its field is selected and
// copied as any text is. Where the clipboard is refused, the field is left selected for the system's copy.
for (const button of document.querySelectorAll('button[data-copy]')) {
  const field = document.getElementById(button.dataset.copy);
  if (!(field instanceof HTMLTextAreaElement || field instanceof HTMLInputElement)) continue;
  button.hidden = false;
  button.addEventListener('click', () => {
    field.select();
    navigator.clipboard?.writeText(field.value).then(
      () => {
        button.textContent = 'Copied';
      },
      () => {
        button.textContent = 'Selected: copy it now';
      },
    );
  });
}

// A date field shown only when its radio is chosen ("until a date"), so the choice reads as one question.
for (const toggle of document.querySelectorAll('[data-reveals]')) {
  const target = document.getElementById(toggle.dataset.reveals);
  if (!target) continue;
  const group = document.querySelectorAll(`input[name="${toggle.name}"]`);
  const update = () => {
    target.hidden = !toggle.checked;
  };
  for (const radio of group) radio.addEventListener('change', update);
  update();
}

// A new barrier's time zone is the browser's (docs/design.md section 3.1); without this script it is UTC until its
// owner chooses one on its page.
for (const field of document.querySelectorAll('input[data-browser-zone]')) {
  field.value = Intl.DateTimeFormat().resolvedOptions().timeZone ?? '';
}

// An account with no time zone yet takes the browser's (docs/design.md section 10.1): the page names where to
// propose it, once, as JSON with the page's CSRF token like the passkey calls. The server keeps it only while
// the account still has none, so it never overrides a zone chosen on /account. Without this script the account
// reads its times in UTC until its owner chooses a zone there.
const proposeZoneTo = document.body.dataset.proposeZone;
const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
const pageToken = document.querySelector('input[name="_csrf"]');
if (proposeZoneTo && browserZone && pageToken) {
  fetch(proposeZoneTo, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      'x-csrf-token': pageToken.value,
    },
    body: JSON.stringify({ time_zone: browserZone, proposed: true }),
  }).catch(() => {});
}

// "Call the gate" (docs/design.md section 10.9) dials through its post's answer, a 303 to tel:, so the page
// stays as it was while the phone's dialler comes up. Back from the call, the page is read again and says whose
// tap was recorded. Without this script it says so on the next load.
for (const form of document.querySelectorAll('form[data-call-form]')) {
  form.addEventListener('submit', () => {
    const readAgain = () => {
      if (document.visibilityState === 'visible') window.location.reload();
    };
    document.addEventListener('visibilitychange', readAgain);
  });
}
