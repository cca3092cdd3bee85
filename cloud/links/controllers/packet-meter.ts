/**
 * Reads the fixed header of each MQTT packet as its bytes pass, and keeps none of them: the first byte (type
 * and flags), then the Remaining Length, then it skips that many bytes to the next packet. The Remaining Length
 * is 1 to 4 bytes of 7 bits each, least significant first, the top bit saying another byte follows (MQTT 3.1.1
 * section 2.2.3). So the size a packet declares is known from its first five bytes at most, before the rest of
 * it has arrived.
 */
export class PacketMeter {
  #reading: 'type' | 'length' | 'body' = 'type';
  #length = 0;
  #lengthBytes = 0;
  /** Bytes of the current packet's body not yet seen. */
  #bodyLeft = 0;
  #malformed = false;

  /**
   * The size, fixed header included, of the largest packet whose fixed header ends in `chunk` (0 when none
   * does), or Infinity once a Remaining Length has run past 4 bytes, which no packet may have.
   */
  largestIn(chunk: Buffer): number {
    if (this.#malformed) return Number.POSITIVE_INFINITY;
    let largest = 0;
    let at = 0;
    while (at < chunk.length) {
      if (this.#reading === 'body') {
        const skipped = Math.min(this.#bodyLeft, chunk.length - at);
        at += skipped;
        this.#bodyLeft -= skipped;
        if (this.#bodyLeft === 0) this.#reading = 'type';
        continue;
      }
      const byte = chunk[at++]!;
      if (this.#reading === 'type') {
        this.#startHeader();
        continue;
      }
      const declared = this.#lengthByte(byte);
      if (declared === null) continue;
      if (!Number.isFinite(declared)) return declared;
      largest = Math.max(largest, declared);
    }
    return largest;
  }

  #startHeader(): void {
    this.#reading = 'length';
    this.#length = 0;
    this.#lengthBytes = 0;
  }

  /** Takes one byte of a Remaining Length: the packet's whole size once it was the last, else null. */
  #lengthByte(byte: number): number | null {
    this.#length += (byte & 0x7f) * 128 ** this.#lengthBytes;
    this.#lengthBytes++;
    if (byte & 0x80) {
      if (this.#lengthBytes < 4) return null;
      this.#malformed = true;
      return Number.POSITIVE_INFINITY;
    }
    this.#bodyLeft = this.#length;
    this.#reading = this.#length > 0 ? 'body' : 'type';
    return 1 + this.#lengthBytes + this.#length;
  }
}
