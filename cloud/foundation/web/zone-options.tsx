import type { VNode } from 'preact';
import { timeZones } from '../zones/zone-names.js';

/** The options of a time zone `<select>`: UTC, then every IANA zone this runtime knows, `chosen` selected. */
export function ZoneOptions(props: { chosen: string }): VNode {
  return (
    <>
      {timeZones().map((zone) => (
        <option key={zone} value={zone} selected={zone === props.chosen}>
          {zone}
        </option>
      ))}
    </>
  );
}
