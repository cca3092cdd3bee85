// Passkeys on the account pages (docs/design.md section 10.2). Each button names its ceremony and its two
// calls: the first returns the options and a ceremony id, the browser asks the person's authenticator, the
// second sends the answer back with that id and returns where to go. The calls are JSON with the page's CSRF
// token in X-CSRF-Token. Progress and errors are written to the button's status region, which is read out.
(() => {
  const buttons = document.querySelectorAll('button[data-passkey]');
  if (buttons.length === 0) return;
  const library = window.SimpleWebAuthnBrowser;
  if (!library || typeof window.PublicKeyCredential !== 'function') {
    for (const note of document.querySelectorAll('[data-passkey-unsupported]')) note.hidden = false;
    return;
  }
  for (const button of buttons) {
    button.hidden = false;
    button.addEventListener('click', () => run(button));
  }

  async function run(button) {
    const status = document.getElementById(button.dataset.status);
    const fields = formFields(button);
    clearFieldErrors(button);
    button.disabled = true;
    say(status, 'Waiting for your passkey…', false);
    try {
      const begun = await post(button.dataset.start, fields);
      const response =
        button.dataset.passkey === 'sign-in'
          ? await library.startAuthentication({ optionsJSON: begun.options })
          : await library.startRegistration({ optionsJSON: begun.options });
      say(status, 'Checking the passkey…', false);
      const done = await post(button.dataset.finish, { ...fields, ceremony: begun.ceremony, response });
      say(status, 'Done.', false);
      window.location.assign(done.redirect);
    } catch (error) {
      button.disabled = false;
      say(status, explain(error), true);
      markField(button, error.field);
    }
  }

  /** The fields of the button's form (a name, an e-mail address, next), without the CSRF token. */
  function formFields(button) {
    const fields = {};
    if (button.dataset.next) fields.next = button.dataset.next;
    if (!button.form) return fields;
    for (const [name, value] of new FormData(button.form)) {
      if (name !== '_csrf' && typeof value === 'string') fields[name] = value;
    }
    return fields;
  }

  async function post(url, body) {
    const csrf = document.querySelector('input[name="_csrf"]');
    const response = await fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        'x-csrf-token': csrf ? csrf.value : '',
      },
      body: JSON.stringify(body),
    });
    const answer = await response.json().catch(() => ({}));
    if (response.ok) return answer;
    const error = new Error(answer.message || `The server answered ${response.status}; try again.`);
    error.fromServer = true;
    error.field = answer.field;
    throw error;
  }

  /** A sentence a person can act on, for whatever went wrong. */
  function explain(error) {
    if (error.fromServer) return error.message;
    if (error.code === 'ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED') {
      return 'This device already holds a passkey for your account.';
    }
    if (error.name === 'NotAllowedError' || error.code === 'ERROR_CEREMONY_ABORTED') {
      return 'The passkey request was cancelled or timed out. Try again, or use an e-mail code.';
    }
    if (error instanceof TypeError) return 'The network failed. Check your connection and try again.';
    return `The passkey could not be used: ${error.message}`;
  }

  function say(status, text, isError) {
    if (!status) return;
    status.textContent = text;
    status.classList.toggle('error', isError);
  }

  function clearFieldErrors(button) {
    if (!button.form) return;
    for (const input of button.form.querySelectorAll('[aria-invalid="true"]'))
      input.removeAttribute('aria-invalid');
  }

  /** The field the server named is marked and focused, so the person sees what to change. */
  function markField(button, name) {
    if (!name || !button.form) return;
    const input = button.form.elements.namedItem(name);
    if (!(input instanceof HTMLInputElement)) return;
    input.setAttribute('aria-invalid', 'true');
    input.focus();
  }
})();
