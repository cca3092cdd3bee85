/**
 * A part of the cloud with a lifetime: the data folder's lock, the database, the broker, the HTTP server, the
 * background jobs (cloud.ts composes them). Started in the order given and stopped in reverse, so that nothing
 * is stopped while a part started after it still uses it.
 */
export interface Component {
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts each component in order. If one fails, the ones already started are stopped in reverse and the
 * failure is thrown, naming the component. Resolves with the function that stops them all, in reverse.
 */
export async function startInOrder(components: readonly Component[]): Promise<() => Promise<void>> {
  const started: Component[] = [];
  const stopAll = async () => {
    for (const component of started.reverse()) await component.stop();
    started.length = 0;
  };
  for (const component of components) {
    try {
      await component.start();
    } catch (error) {
      await stopAll();
      throw error;
    }
    started.push(component);
  }
  return stopAll;
}
