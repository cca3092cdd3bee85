import type { FastifyInstance } from 'fastify';
import type { WebDeps } from '../web/web-deps.js';

/**
 * The operator console (docs/design.md section 11.5): pending companies, approval, rejection with a reason,
 * suspension and resumption, and the record of who did each.
 */
export async function operatorConsole(app: FastifyInstance, deps: WebDeps): Promise<void> {
  void app;
  void deps;
}
