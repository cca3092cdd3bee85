import { z } from 'zod';
import type { PhoneBattery, PhoneNetwork } from '../../shared/protocol/messages.js';
import { networkOf, telephonyInfoSchema } from './telephony-info.js';
import { readTermuxJson } from './termux-answer.js';
import { runTermux, type TermuxResult } from './termux-command.js';

/**
 * The battery as `termux-battery-status` prints it (BatteryStatusAPI.java, termux/termux-api): one JSON object
 * with `percentage` (BatteryManager's capacity; absent where Android does not give it), `level` and `scale`,
 * `plugged` (UNPLUGGED, PLUGGED_AC, PLUGGED_USB, PLUGGED_DOCK, PLUGGED_WIRELESS, or PLUGGED_<n>),
 * `temperature` (degrees Celsius, one decimal) and more that the telemetry does not carry.
 */
const batteryStatusSchema = z.object({
  percentage: z.number().int().optional(),
  level: z.number().int().optional(),
  scale: z.number().int().optional(),
  plugged: z.string().max(32).optional(),
  temperature: z.number().optional(),
});
type BatteryStatus = z.infer<typeof batteryStatusSchema>;

/** The telemetry's phone fields (shared/protocol/messages.ts); each absent when it could not be read. */
export interface PhoneTelemetry {
  battery?: PhoneBattery;
  network?: PhoneNetwork;
}

export interface PhoneTelemetryOptions {
  timeoutMs: number;
  env?: Readonly<Record<string, string | undefined>>;
}

/** Reads both at once; never rejects, and a field Termux cannot give is left out rather than guessed. */
export async function readPhoneTelemetry(options: PhoneTelemetryOptions): Promise<PhoneTelemetry> {
  const run = (command: string) => runTermux(command, [], { timeoutMs: options.timeoutMs, env: options.env });
  const [battery, info] = await Promise.all([
    run('termux-battery-status'),
    run('termux-telephony-deviceinfo'),
  ]);
  const batteryValue = answerOf(battery, batteryStatusSchema);
  const infoValue = answerOf(info, telephonyInfoSchema);
  const reading: PhoneTelemetry = {};
  const charge = batteryValue ? batteryOf(batteryValue) : null;
  if (charge) reading.battery = charge;
  if (infoValue) reading.network = networkOf(infoValue);
  return reading;
}

function answerOf<T>(result: TermuxResult, schema: z.ZodType<T>): T | null {
  if (result.kind !== 'done') return null;
  const answer = readTermuxJson(result.stdout, schema);
  return answer.kind === 'value' ? answer.value : null;
}

/** Bounded to what the cloud takes: a percentage out of 0..100 is no reading, a strange temperature none. */
function batteryOf(status: BatteryStatus): PhoneBattery | null {
  const percentage =
    status.percentage ??
    (status.level !== undefined && status.scale !== undefined && status.scale > 0
      ? Math.round((status.level * 100) / status.scale)
      : undefined);
  if (percentage === undefined || percentage < 0 || percentage > 100 || status.plugged === undefined)
    return null;
  const temperature = status.temperature;
  return {
    percentage,
    plugged: status.plugged !== 'UNPLUGGED',
    ...(temperature !== undefined && temperature >= -50 && temperature <= 150 ? { temperature } : {}),
  };
}
