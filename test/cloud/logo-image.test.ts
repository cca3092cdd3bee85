import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { acceptLogo, type LogoUpload, MAX_LOGO_BYTES } from '../../cloud/rules/logos/logo-image.js';
import { ApiError } from '../../shared/errors.js';
import {
  animatedPng,
  animatedWebp,
  decompressionBomb,
  jpegWithMetadata,
  pngLogo,
  SVG_LOGO,
  twoColourImage,
  upload,
} from '../support/logo-files.js';

/**
 * The logo rules (docs/design.md section 11.3) without a server: each refusal says what to do, and what is
 * accepted comes out as a still 256 × 256 WebP that carries nothing of the original file but its pixels.
 */
async function refusal(file: LogoUpload): Promise<string> {
  const error = await acceptLogo(file).then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!(error instanceof ApiError)) throw new Error(`expected a refusal, got ${String(error)}`);
  expect(error.code).toBe('logo_refused');
  expect(error.field).toBe('logo');
  return error.message;
}

describe('accepted logos', () => {
  it('re-encodes a PNG, a JPEG and a WebP to a 256 × 256 WebP', async () => {
    const png = await pngLogo(512);
    const jpeg = await twoColourImage(300).jpeg().toBuffer();
    const webp = await twoColourImage(1000, 990).webp().toBuffer();
    for (const file of [
      upload(png, 'logo.png', 'image/png'),
      upload(jpeg, 'Logo.JPG', 'image/jpeg'),
      upload(jpeg, 'logo.jpeg', 'application/octet-stream'),
      upload(webp, 'logo.webp', 'image/webp'),
    ]) {
      const meta = await sharp(await acceptLogo(file)).metadata();
      expect([meta.format, meta.width, meta.height, meta.pages ?? 1]).toEqual(['webp', 256, 256, 1]);
    }
  });

  it('[attack:web.logo-metadata] keeps no EXIF, ICC profile or XMP of the upload, and applies its turn first', async () => {
    const original = await jpegWithMetadata();
    const before = await sharp(original).metadata();
    expect(before.exif?.toString('latin1')).toContain('secret');
    expect(before.icc).toBeDefined();
    expect(before.xmp?.toString()).toContain('where the photo was taken');
    const output = await acceptLogo(upload(original, 'photo.jpg', 'image/jpeg'));
    const after = await sharp(output).metadata();
    expect(after.exif).toBeUndefined();
    expect(after.icc).toBeUndefined();
    expect(after.xmp).toBeUndefined();
    expect(after.orientation).toBeUndefined();
    expect(output.toString('latin1')).not.toContain('secret');
    expect(output.toString('latin1')).not.toMatch(/EXIF|ICCP|XMP /);
    // Orientation 6 turns the picture a quarter clockwise: the red left half is on top once applied.
    const { data } = await sharp(output).raw().toBuffer({ resolveWithObject: true });
    const pixel = (x: number, y: number) => [...data.subarray((y * 256 + x) * 3, (y * 256 + x) * 3 + 3)];
    expect(pixel(128, 20)[0]).toBeGreaterThan(150);
    expect(pixel(128, 236)[2]).toBeGreaterThan(150);
  });
});

describe('refused logos, each with what to do', () => {
  it('[attack:web.logo-svg] refuses SVG, naming it, and GIF, AVIF, TIFF and unknown files', async () => {
    expect(await refusal(upload(SVG_LOGO, 'logo.svg', 'image/svg+xml'))).toBe(
      'SVG logos are not accepted: export your logo as a square PNG of at least 256 × 256 pixels and upload that.',
    );
    expect(await refusal(upload(SVG_LOGO, 'logo.png', 'image/png'))).toMatch(/^SVG logos are not accepted/);
    const square = twoColourImage(64);
    expect(await refusal(upload(await square.clone().gif().toBuffer(), 'logo.gif', 'image/gif'))).toBe(
      'GIF logos are not accepted: save your logo as a PNG, JPEG or WebP image and upload that.',
    );
    expect(await refusal(upload(await square.clone().avif().toBuffer(), 'logo.avif', 'image/avif'))).toMatch(
      /^AVIF logos are not accepted/,
    );
    expect(await refusal(upload(await square.clone().tiff().toBuffer(), 'logo.tif', 'image/tiff'))).toMatch(
      /^TIFF logos are not accepted/,
    );
    expect(await refusal(upload(Buffer.from('just some text'), 'logo.png', 'image/png'))).toBe(
      'This file is not a PNG, JPEG or WebP image. Save your logo in one of those formats and upload it again.',
    );
  });

  it('[attack:web.logo-mismatch] refuses content that does not match its name or its declared type', async () => {
    const jpeg = await twoColourImage(300).jpeg().toBuffer();
    expect(await refusal(upload(jpeg, 'logo.png', 'image/png'))).toBe(
      'The file holds a JPEG image, but its name ends in .png. Rename it to end in .jpg or .jpeg, or save it as the format its name says, and upload it again.',
    );
    expect(await refusal(upload(jpeg, 'logo', 'image/jpeg'))).toContain('but its name has no extension');
    expect(await refusal(upload(jpeg, 'logo.jpg', 'image/png'))).toBe(
      'The file holds a JPEG image, but it was sent as image/png. Save it again as a JPEG file and upload that.',
    );
  });

  it('[attack:web.logo-bomb] refuses a small file whose header declares 30000 × 30000 pixels, without decoding it', async () => {
    const bomb = decompressionBomb();
    expect(bomb.length).toBeLessThan(200);
    expect(await refusal(upload(bomb, 'logo.png', 'image/png'))).toBe(
      'The image says it is 30000 × 30000 pixels; a logo may have at most 4096 × 4096. Save it smaller, 512 × 512 for example, and upload it again.',
    );
  });

  it('refuses an animated WebP and an animated PNG', async () => {
    const animated = 'Animated logos are not accepted: upload a still PNG, JPEG or WebP image.';
    expect(await refusal(upload(await animatedWebp(), 'logo.webp', 'image/webp'))).toBe(animated);
    expect(await refusal(upload(animatedPng(await pngLogo(64)), 'logo.png', 'image/png'))).toBe(animated);
  });

  it('refuses an image that is not square within 2 %, and accepts one that is', async () => {
    const wide = await twoColourImage(300, 200).png().toBuffer();
    expect(await refusal(upload(wide, 'logo.png', 'image/png'))).toBe(
      'The image is 300 × 200 pixels, not square. Crop it to a square (the sides may differ by at most 2 %) and upload it again.',
    );
    const slightly = await twoColourImage(500, 489).png().toBuffer();
    expect(await refusal(upload(slightly, 'logo.png', 'image/png'))).toContain(
      '500 × 489 pixels, not square',
    );
    const within = await twoColourImage(500, 490).png().toBuffer();
    await expect(acceptLogo(upload(within, 'logo.png', 'image/png'))).resolves.toBeInstanceOf(Buffer);
  });

  it('refuses a file over 1 MiB, an empty one, no file, and a damaged one', async () => {
    const png = await pngLogo(64);
    expect(await refusal({ ...upload(png, 'logo.png', 'image/png'), tooLarge: true })).toBe(
      'The file is larger than 1 MiB. Save the logo smaller (512 × 512 pixels is plenty) and upload it again.',
    );
    expect(await refusal(upload(Buffer.alloc(0), 'logo.png', 'image/png'))).toContain('The file is empty');
    expect(await refusal(upload(Buffer.alloc(0), '', ''))).toBe(
      'Choose the image file of your logo, then upload it.',
    );
    expect(await refusal(upload(png.subarray(0, 60), 'logo.png', 'image/png'))).toBe(
      'The file could not be read as a PNG image; it may be damaged. Save it again and upload the new file.',
    );
    expect(MAX_LOGO_BYTES).toBe(1_048_576);
  });
});
