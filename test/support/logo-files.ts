import { deflateSync } from 'node:zlib';
import sharp from 'sharp';
import type { LogoUpload } from '../../cloud/rules/logos/logo-image.js';

/**
 * The image files the logo suites upload, each made here from nothing: good logos, and every kind of file the
 * rules refuse (docs/design.md section 11.3), so no binary fixture hides what a test tries.
 */
export function upload(bytes: Buffer, filename: string, contentType: string): LogoUpload {
  return { bytes, filename, contentType, tooLarge: false };
}

/** A square logo: left half red, right half blue, so that a turn is visible. */
export function twoColourImage(width: number, height = width) {
  const half = Math.floor(width / 2);
  return sharp({ create: { width, height, channels: 3, background: '#dc2626' } }).composite([
    {
      input: { create: { width: width - half, height, channels: 3, background: '#1d4ed8' } },
      left: half,
      top: 0,
    },
  ]);
}

export function pngLogo(size = 512): Promise<Buffer> {
  return twoColourImage(size).png().toBuffer();
}

/** A JPEG carrying EXIF (a copyright line and a turn: orientation 6), an ICC profile and XMP. */
export async function jpegWithMetadata(): Promise<Buffer> {
  const flat = await twoColourImage(400).png().toBuffer();
  return sharp(flat)
    .jpeg()
    .withMetadata({ orientation: 6, exif: { IFD0: { Copyright: 'secret', Artist: 'Someone private' } } })
    .withXmp('<x:xmpmeta xmlns:x="adobe:ns:meta/"><secret>where the photo was taken</secret></x:xmpmeta>')
    .toBuffer();
}

export function animatedWebp(): Promise<Buffer> {
  const frame = (colour: string) =>
    sharp({ create: { width: 64, height: 64, channels: 3, background: colour } })
      .png()
      .toBuffer();
  return Promise.all([frame('red'), frame('blue')]).then((frames) =>
    sharp(frames, { join: { animated: true } })
      .webp({ loop: 0, delay: [200, 200] })
      .toBuffer(),
  );
}

export const SVG_LOGO = Buffer.from(
  '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><script>alert(1)</script><rect width="64" height="64"/></svg>',
);

/**
 * A PNG of 116 bytes whose header declares 30000 × 30000 pixels (one bit each): decoded, it would take 3.6 GB
 * as the RGBA pixels a resize works on.
 */
export function decompressionBomb(side = 30000): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header[8] = 1; // bit depth
  header[9] = 0; // greyscale
  return Buffer.concat([
    PNG_SIGNATURE,
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(Buffer.alloc(Math.ceil(side / 8) + 1))),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** The PNG with an `acTL` chunk after its header, as an animated PNG starts. */
export function animatedPng(png: Buffer): Buffer {
  const afterHeader = 8 + 12 + png.readUInt32BE(8);
  const control = Buffer.alloc(8);
  control.writeUInt32BE(2, 0);
  return Buffer.concat([png.subarray(0, afterHeader), pngChunk('acTL', control), png.subarray(afterHeader)]);
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? 0xedb88320 ^ (crc >>> 1) : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}
