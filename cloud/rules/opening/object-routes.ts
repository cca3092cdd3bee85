/** Where an object's commands go: its controller, and the object's id in that controller's config. */
export interface ObjectRoute {
  deviceId: string;
  object: string;
}

/** Enough for every object a busy instance opens; beyond it, the ones learned first are forgotten first. */
const MAX_ROUTES = 10_000;

/**
 * The route of each object number, as the database last gave it. An object never moves: its number is its row
 * in `device_objects`, which names one device and one local id for good (a controller that reports the object
 * again gets the same row back). So a route learned once lets the next command for that object be signed while
 * the database still checks the call. The database's answer stays the authority: a command signed for
 * another route than the one it gives is signed again.
 */
export class ObjectRoutes {
  readonly #routes = new Map<number, ObjectRoute>();

  get(numberId: number): ObjectRoute | undefined {
    return this.#routes.get(numberId);
  }

  remember(numberId: number, route: ObjectRoute): void {
    const known = this.#routes.get(numberId);
    if (known?.deviceId === route.deviceId && known.object === route.object) return;
    this.#routes.delete(numberId);
    this.#routes.set(numberId, route);
    if (this.#routes.size > MAX_ROUTES) this.#routes.delete(this.#routes.keys().next().value!);
  }
}
