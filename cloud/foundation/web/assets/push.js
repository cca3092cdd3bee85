// Notifications on this device (docs/design.md section 10.6), on the account page. The page works without this
// script: the card then says the browser cannot. With it, and a browser that can push, the button is shown; only
// pressing it asks the browser's permission, then subscribes with the cloud's VAPID key and posts the
// subscription as JSON with the page's CSRF token, like the passkey calls.
const card = document.querySelector('[data-push-card]');

function base64urlBytes(text) {
  const padded = text
    .replace(/-/g, '+')
    .replace(/_/g, '/')
    .padEnd(Math.ceil(text.length / 4) * 4, '=');
  return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
}

function say(text) {
  const status = document.getElementById(card.dataset.status);
  if (status) status.textContent = text;
}

async function turnOn(button) {
  button.disabled = true;
  try {
    say('Asking this browser for permission…');
    const permission = await Notification.requestPermission();
    if (permission !== 'granted') {
      say('Notifications were not allowed, so none will be shown here.');
      return;
    }
    say('Turning notifications on…');
    await navigator.serviceWorker.register('/service-worker.js');
    const registration = await navigator.serviceWorker.ready;
    const subscription =
      (await registration.pushManager.getSubscription()) ??
      (await registration.pushManager.subscribe({
        userVisibleOnly: true,
        applicationServerKey: base64urlBytes(card.dataset.vapidKey),
      }));
    const token = document.querySelector('input[name="_csrf"]');
    const response = await fetch(card.dataset.subscribe, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        'x-csrf-token': token ? token.value : '',
      },
      body: JSON.stringify(subscription),
    });
    const answer = await response.json().catch(() => ({}));
    if (response.ok && typeof answer.redirect === 'string') {
      window.location.assign(answer.redirect);
      return;
    }
    say(answer.message || 'Notifications could not be turned on. Reload the page and try again.');
  } catch {
    say('This browser could not subscribe to notifications just now. Try again later.');
  } finally {
    button.disabled = false;
  }
}

if (card) {
  const button = card.querySelector('[data-push-subscribe]');
  const able = 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;
  if (!able) {
    card.querySelector('[data-push-unsupported]').hidden = false;
  } else if (Notification.permission === 'denied') {
    card.querySelector('[data-push-blocked]').hidden = false;
  } else {
    button.hidden = false;
    button.addEventListener('click', () => turnOn(button));
  }
}
