import { z } from 'zod';
import { gateNumberSchema, objectId, PRINTABLE_TEXT } from '../shared/protocol/messages.js';
import { filePath, int, text } from './config-values.js';

/**
 * The outputs a controller drives, as its config file names them (hardware/README.md): a relay on a GPIO line,
 * a GSM number to dial through a modem or from the controller's own phone, or a simulated output; and the
 * modem that dials. Part of the config schema of device/config.ts.
 */

const pulseMs = int('the pulse length in milliseconds', 0, 60_000);

/** As the cloud takes it in the state and at provisioning (shared/README.md, "Messages"). */
const label = text('a label of 1 to 64 characters')
  .max(64, { error: 'expected a label of 1 to 64 characters' })
  .regex(PRINTABLE_TEXT, { error: 'expected a label without control characters' });

/** How a line is found on a GPIO chip: the same keys for a relay's output and a sensor's input. */
const gpioLine = {
  /** The GPIO line on the chip (for a Raspberry Pi: the BCM number, e.g. 17 for header pin 11). */
  line: int('the GPIO line number on the chip (BCM number on a Raspberry Pi)', 0, 1023),
  /**
   * Which gpiochip the line belongs to, by its label in /sys/class/gpio/gpiochip{N}/label. `auto` picks the
   * SoC's pin controller (pinctrl-bcm2835, pinctrl-bcm2711, pinctrl-rp1, ...).
   */
  chip: text('auto or the gpiochip label (e.g. pinctrl-bcm2711)').default('auto'),
  /**
   * The sysfs number of the chip's first line. `auto` reads it from /sys/class/gpio/gpiochip{N}/base, which is
   * needed on current Raspberry Pi kernels (gpiochip512: line 17 is sysfs 529); a number overrides it.
   */
  sysfs_base: z
    .union([z.literal('auto'), int('auto or the sysfs base number', 0, 4096)], {
      error: 'expected auto or the sysfs base number (an integer from 0 to 4096)',
    })
    .default('auto'),
};

/**
 * A gate position sensor on a GPIO input (docs/design.md section 12.5): a reed switch or limit switch at the
 * closed end, which makes contact when the gate is shut (`closed_when: active`), or the opposite for a switch
 * that opens its contact when the gate is shut.
 */
const gpioSensor = z.strictObject({
  type: z.literal('gpio'),
  ...gpioLine,
  /** True when the input reads low while the switch is made (a switch to ground with a pull-up). */
  active_low: z.boolean({ error: 'expected true or false' }).default(false),
  closed_when: z
    .enum(['active', 'inactive'], {
      error: 'expected active (the switch is made when the gate is shut) or inactive',
    })
    .default('active'),
  /** A contact that bounces is read as settled only once it kept its level this long. */
  debounce_ms: int('the debounce time in milliseconds', 0, 2000).default(50),
});

/** A simulated sensor for a simulated object: it follows the simulated output's pulses (section 12.5). */
const simulatedSensor = z.strictObject({
  type: z.literal('simulated'),
  /** How long after the pulse starts the gate is seen open (its travel time). */
  open_after_ms: int('how long the gate takes to open, in milliseconds', 0, 600_000).default(1500),
  /**
   * `auto-close`: the gate closes again `close_after_ms` after it opened; `toggle`: each pulse moves it the
   * other way, as many gate controllers do, so it stays open until the next pulse.
   */
  mode: z.enum(['auto-close', 'toggle'], { error: 'expected auto-close or toggle' }).default('auto-close'),
  close_after_ms: int(
    'how long the gate stays open in auto-close mode, in milliseconds',
    0,
    86_400_000,
  ).default(20_000),
  /** True: the gate never moves, so the cloud sees an opening whose gate did not move. */
  stuck: z.boolean({ error: 'expected true or false' }).default(false),
});

/**
 * The sensor an object of each kind may have, as a union on `type` so that a wrong type is one line that says
 * which one fits, not a list of the other type's missing keys.
 */
const gpioSensorOnly = z.discriminatedUnion('type', [gpioSensor], {
  error: 'expected type: gpio (a relay or gsm object reads its gate on a GPIO input)',
});
const simulatedSensorOnly = z.discriminatedUnion('type', [simulatedSensor], {
  error: 'expected type: simulated (a simulated object has a simulated sensor)',
});

/** The number of the GSM module at a barrier, for the gsm and phone kinds alike: the protocol's rule. */
const gateNumber = gateNumberSchema;

const relayObject = z.strictObject({
  id: objectId,
  label,
  kind: z.literal('relay'),
  ...gpioLine,
  /** True when the relay board switches on with a low level (most opto-isolated boards do). */
  active_low: z.boolean({ error: 'expected true or false' }).default(true),
  pulse_ms: pulseMs.default(800),
  sensor: gpioSensorOnly.optional(),
});

const gsmObject = z.strictObject({
  id: objectId,
  label,
  kind: z.literal('gsm'),
  /** The number of the GSM module at the barrier; it opens when this controller's SIM calls it. */
  number: gateNumber,
  /** How long to wait for the call to ring at the module before giving up with no_answer. */
  ring_timeout_ms: int('the ring timeout in milliseconds', 500, 120_000).default(7000),
  /** How long to let it ring once it rings, if the module does not drop the call by itself. */
  ring_hold_ms: int('how long to let it ring in milliseconds', 0, 30_000).default(1500),
  sensor: gpioSensorOnly.optional(),
});

/**
 * A barrier the controller's own phone calls: the controller runs on an Android phone under Termux and dials
 * the gate's GSM module from the phone's SIM (docs/design.md section 12.6). No sensor: a phone has no GPIO.
 */
const phoneObject = z.strictObject({
  id: objectId,
  label,
  kind: z.literal('phone'),
  /** The number of the GSM module at the barrier; it opens when this phone's SIM calls it. */
  number: gateNumber,
  /** How long one Termux:API command may take; the commands hang when the Termux:API app is missing. */
  command_timeout_ms: int('the Termux:API command timeout in milliseconds', 1000, 60_000).default(10_000),
  /**
   * How long to wait for the call to show in the call log (Android writes it once the call ended) before
   * reporting it only as placed: a module that rejects at once ends it within seconds.
   */
  call_timeout_ms: int('how long to wait for the call to end, in milliseconds', 1000, 180_000).default(
    45_000,
  ),
  /** How often the call log is read while waiting. */
  poll_ms: int('the call log polling interval in milliseconds', 100, 10_000).default(1000),
  /** Refused in words rather than as an unknown key; typed, so that code reading `sensor` reads none. */
  sensor: z
    .never({ error: 'expected no sensor: a phone has no GPIO input to read a gate position on' })
    .optional(),
});

const simulatedObject = z.strictObject({
  id: objectId,
  label,
  kind: z.literal('simulated'),
  pulse_ms: pulseMs.default(500),
  /** Makes every opening fail with this reason (for demos and tests of the failure path). */
  fail: z
    .enum(['relay_fault', 'no_carrier', 'busy', 'no_answer', 'no_network', 'modem_error'], {
      error: 'expected one of relay_fault, no_carrier, busy, no_answer, no_network, modem_error',
    })
    .optional(),
  sensor: simulatedSensorOnly.optional(),
});

export const objectConfigSchema = z.discriminatedUnion(
  'kind',
  [relayObject, gsmObject, phoneObject, simulatedObject],
  { error: 'expected kind: relay, gsm, phone or simulated' },
);

export const modemSchema = z.strictObject({
  /** Prefer the stable /dev/serial/by-id/... link, or the /dev/gatelink-modem link of the udev rule. */
  path: filePath('the serial device of the modem, e.g. /dev/serial/by-id/usb-...'),
  baud_rate: z
    .union(
      [9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600].map((rate) => z.literal(rate)) as [
        z.ZodLiteral<number>,
        ...z.ZodLiteral<number>[],
      ],
      { error: 'expected a baud rate: 9600, 19200, 38400, 57600, 115200, 230400, 460800 or 921600' },
    )
    .default(115200),
  pin: z
    .string({ error: 'expected the SIM PIN as a quoted string of 4 to 8 digits' })
    .regex(/^[0-9]{4,8}$/, { error: 'expected the SIM PIN as a quoted string of 4 to 8 digits' })
    .optional(),
  /** How long one AT command may take before the modem counts as not answering. */
  command_timeout_ms: int('the AT command timeout in milliseconds', 100, 60_000).default(3000),
  /** How often the modem is checked (AT, signal quality) while idle. */
  health_interval_ms: int('the modem check interval in milliseconds', 100, 3_600_000).default(30_000),
  /** How often the call state is polled with AT+CLCC during a call. */
  poll_ms: int('the call polling interval in milliseconds', 20, 10_000).default(500),
  /** First and longest wait between attempts to reopen a modem that disappeared or stopped answering. */
  reopen_min_ms: int('the first reopen delay in milliseconds', 10, 600_000).default(1000),
  reopen_max_ms: int('the longest reopen delay in milliseconds', 10, 3_600_000).default(60_000),
});

export type ObjectConfig = z.output<typeof objectConfigSchema>;
export type RelayObjectConfig = Extract<ObjectConfig, { kind: 'relay' }>;
export type GsmObjectConfig = Extract<ObjectConfig, { kind: 'gsm' }>;
export type SimulatedObjectConfig = Extract<ObjectConfig, { kind: 'simulated' }>;
export type PhoneObjectConfig = Extract<ObjectConfig, { kind: 'phone' }>;
export type ModemConfig = z.output<typeof modemSchema>;
export type GpioSensorConfig = z.output<typeof gpioSensor>;
export type SimulatedSensorConfig = z.output<typeof simulatedSensor>;
export type SensorConfig = GpioSensorConfig | SimulatedSensorConfig;
