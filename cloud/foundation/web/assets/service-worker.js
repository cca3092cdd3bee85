// Gatelink's service worker (docs/design.md section 10). It keeps the stylesheet, scripts, icons and the
// offline page, so the application starts and says it is offline without a network. Pages themselves are never
// cached: a journal or a list of keys must not be shown from a stale copy, nor kept on a shared device.
const CACHE = 'gatelink-v1';
const PRECACHE = [
  '/offline',
  '/assets/app.css',
  '/assets/app.js',
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
