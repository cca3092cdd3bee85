import { z } from 'zod';

/**
 * What a Termux:API command printed, read with a zod schema. Termux:API answers a command whose Android
 * permission is not granted with `{"error": "Please grant the following permission to use this command:
 * android.permission.CALL_PHONE"}` (TermuxApiPermissionActivity.checkAndRequestPermissions, termux/termux-api)
 * and opens the permission prompt on the phone's screen; the command itself still ends with status 0.
 */
export type TermuxAnswer<T> =
  | { kind: 'value'; value: T }
  | { kind: 'permission'; permission: string }
  /** Printed nothing, something that is not JSON, or JSON of another shape. */
  | { kind: 'unreadable'; detail: string };

const errorAnswer = z.object({ error: z.string().max(1000) });

/** Android names the permission it lacks; the one line to the installer names it back. */
const PERMISSION = /android\.permission\.[A-Z_]+/;

export function readTermuxJson<T>(stdout: string, schema: z.ZodType<T>): TermuxAnswer<T> {
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch {
    const shown = stdout.trim().slice(0, 80);
    return { kind: 'unreadable', detail: shown === '' ? 'it printed nothing' : `it printed ${shown}` };
  }
  const error = errorAnswer.safeParse(json);
  if (error.success) {
    const permission = PERMISSION.exec(error.data.error)?.[0];
    if (permission) return { kind: 'permission', permission };
    return { kind: 'unreadable', detail: error.data.error.slice(0, 200) };
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) return { kind: 'unreadable', detail: 'its answer has an unexpected shape' };
  return { kind: 'value', value: parsed.data };
}

/** The permission error alone, for a command that prints nothing when it works (termux-telephony-call). */
export function permissionLacking(stdout: string): string | null {
  if (stdout.trim() === '') return null;
  const answer = readTermuxJson(stdout, z.unknown());
  return answer.kind === 'permission' ? answer.permission : null;
}
