/** Time as the cloud sees it. Passed in, so expiry and lifetimes can be tested with a fake clock. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
