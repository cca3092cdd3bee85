import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';

/**
 * The security headers of every page and static file (docs/design.md section 10.1): a Content-Security-Policy
 * that allows nothing but our own origin and no inline script or style, and HSTS over https.
 */
export async function securityHeaders(app: FastifyInstance, secure: boolean): Promise<void> {
  await app.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        'default-src': ["'self'"],
        'script-src': ["'self'"],
        'style-src': ["'self'"],
        'img-src': ["'self'", 'data:'],
        'connect-src': ["'self'"],
        'font-src': ["'self'"],
        'manifest-src': ["'self'"],
        'worker-src': ["'self'"],
        'object-src': ["'none'"],
        'base-uri': ["'none'"],
        // A form's redirect is held to form-action too: "Call the gate" answers its post with a 303 to tel:
        // (docs/design.md section 10.9), which dials and carries nothing of the form anywhere.
        'form-action': ["'self'", 'tel:'],
        'frame-ancestors': ["'none'"],
        ...(secure ? { 'upgrade-insecure-requests': [] } : {}),
      },
    },
    // Over plain http (the demo) HSTS would be ignored; over https it tells browsers never to try http.
    strictTransportSecurity: secure,
    // Helmet's default, no-referrer, makes browsers send `Origin: null` with every form post, even our own,
    // which checkOrigin must refuse. same-origin keeps our origin on our own posts and still sends nothing
    // to other sites (a `/c/<code>` address is a bearer secret).
    referrerPolicy: { policy: 'same-origin' },
    crossOriginEmbedderPolicy: false,
  });
}
