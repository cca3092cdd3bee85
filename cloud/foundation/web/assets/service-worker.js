// Gatelink's service worker (docs/design.md section 10). It keeps the stylesheet, scripts, icons and the
// offline page, so the application starts and says it is offline without a network. Pages themselves are never
// cached: a journal or a list of keys must not be shown from a stale copy, nor kept on a shared device.
// It also shows the notifications of openings (docs/design.md section 10.6) and opens their journal on a tap.
const CACHE = 'gatelink-v2';
const PRECACHE = [
  '/offline',
  '/assets/app.css',
  '/assets/app.js',
  '/assets/push.js',
  '/assets/icon.svg',
  '/assets/icon-192.png',
];

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(PRECACHE))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) => Promise.all(names.filter((name) => name !== CACHE).map((name) => caches.delete(name))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== 'GET' || url.origin !== self.location.origin) return;
  if (request.mode === 'navigate') {
    event.respondWith(fetch(request).catch(() => caches.match('/offline')));
    return;
  }
  if (url.pathname.startsWith('/assets/')) {
    event.respondWith(caches.match(request).then((cached) => cached || fetch(request)));
  }
});

// A notification of an opening: the payload was encrypted to this browser's keys, and carries no secret. One per
// journal entry (its tag), so a notification sent twice replaces the first rather than showing again.
self.addEventListener('push', (event) => {
  let data = null;
  try {
    data = event.data ? event.data.json() : null;
  } catch {
    data = null;
  }
  if (data?.kind === 'question' && typeof data.title === 'string' && typeof data.tag === 'string') {
    event.waitUntil(showQuestion(data));
    return;
  }
  // Other notices (docs/design.md section 10.7) come with their words ready and a tag per subject, so "closed
  // again" replaces "left open" and a repeat replaces itself.
  if (data?.kind !== 'opening' && typeof data?.title === 'string' && typeof data?.tag === 'string') {
    const when = new Date(data.at);
    event.waitUntil(
      self.registration.showNotification(data.title, {
        body: typeof data.body === 'string' ? data.body : '',
        tag: data.tag,
        timestamp: Number.isNaN(when.getTime()) ? Date.now() : when.getTime(),
        icon: '/assets/icon-192.png',
        data: { url: data.url },
      }),
    );
    return;
  }
  if (data?.kind !== 'opening') return;
  const company = data.company_domain ? `${data.company} (${data.company_domain})` : data.company;
  const time = new Date(data.at);
  const at = Number.isNaN(time.getTime())
    ? ''
    : ` at ${time.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })}`;
  event.waitUntil(
    self.registration.showNotification(`${data.barrier}: ${data.outcome}`, {
      body: `${data.actor} of ${company}${at}`,
      tag: `journal-${data.entry}`,
      timestamp: Number.isNaN(time.getTime()) ? Date.now() : time.getTime(),
      icon: '/assets/icon-192.png',
      data: { url: data.url },
    }),
  );
});

// A question of "ask me before each opening" (docs/design.md section 10.8): Allow and Deny on the notification
// itself, which stays until answered; the opening waits on the cloud meanwhile. A request to call the gate
// (section 10.9) stays too, but its one action opens the page: only a tap on the page can dial.
function showQuestion(data) {
  const when = new Date(data.at);
  if (data.asks === 'call') {
    return self.registration.showNotification(data.title, {
      body: typeof data.body === 'string' ? data.body : '',
      tag: data.tag,
      requireInteraction: true,
      timestamp: Number.isNaN(when.getTime()) ? Date.now() : when.getTime(),
      icon: '/assets/icon-192.png',
      actions: [{ action: 'call', title: 'Call the gate…' }],
      data: { url: data.url },
    });
  }
  return self.registration.showNotification(data.title, {
    body: typeof data.body === 'string' ? data.body : '',
    tag: data.tag,
    requireInteraction: true,
    timestamp: Number.isNaN(when.getTime()) ? Date.now() : when.getTime(),
    icon: '/assets/icon-192.png',
    actions: [
      { action: 'allow', title: 'Allow' },
      { action: 'deny', title: 'Deny' },
    ],
    data: { url: data.url, question: true },
  });
}

// An answer from the notification's button goes through the question's own page and form, with this browser's
// session and the form's CSRF token, exactly as a press on the page would: the notification carries no secret.
// Signed out, or any other trouble, and the page opens instead, where the reader answers.
async function answerQuestion(target, answer) {
  try {
    const page = await fetch(target.href, { credentials: 'same-origin', redirect: 'manual' });
    const token = page.ok ? /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] : undefined;
    if (token) {
      const body = new URLSearchParams({ _csrf: token, answer });
      const posted = await fetch(target.href, {
        method: 'POST',
        credentials: 'same-origin',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });
      if (posted.type === 'opaqueredirect' || posted.ok) return;
    }
  } catch {
    // Offline or refused: the page says what is wrong.
  }
  await self.clients.openWindow(target.href);
}

// A tap opens the barrier's journal, or brings a window already on it forward; only a page of this origin.
self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  if (event.notification.data?.question && (event.action === 'allow' || event.action === 'deny')) {
    let target;
    try {
      target = new URL(event.notification.data.url, self.location.origin);
    } catch {
      return;
    }
    if (target.origin !== self.location.origin) return;
    event.waitUntil(answerQuestion(target, event.action));
    return;
  }
  let target;
  try {
    target = new URL(event.notification.data?.url ?? '/', self.location.origin);
  } catch {
    return;
  }
  if (target.origin !== self.location.origin) return;
  event.waitUntil(
    self.clients.matchAll({ type: 'window', includeUncontrolled: true }).then((windows) => {
      const open = windows.find((client) => client.url === target.href);
      return open ? open.focus() : self.clients.openWindow(target.href);
    }),
  );
});
