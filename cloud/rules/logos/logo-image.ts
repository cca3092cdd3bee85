import sharp from 'sharp';
import { ApiError } from '../../../shared/errors.js';
import {
  declaredTypeMatches,
  extensionOf,
  extensionsInWords,
  FORMAT_NAMES,
  isAnimatedPng,
  type LogoFormat,
  nameMatches,
  sniffFormat,
} from './logo-format.js';

/**
 * The logo rules (docs/design.md section 11.3): PNG, JPEG or WebP of at most 1 MiB, square within 2 %, still,
 * of at most 4096 × 4096 pixels, its content matching its name; re-encoded here to a 256 × 256 WebP without
 * any metadata, the only form the service ever serves. Each refusal says what to do.
 */
export const MAX_LOGO_BYTES = 1024 * 1024;
export const LOGO_SIZE = 256;
/** The largest image decoded: a header may claim any size, and decoding 30000 × 30000 pixels takes 3.6 GB. */
export const MAX_LOGO_SIDE = 4096;
const MAX_PIXELS = MAX_LOGO_SIDE * MAX_LOGO_SIDE;
/** How far the sides may differ, as a share of the longer: a logo cropped by hand is rarely exact. */
const SQUARE_TOLERANCE = 0.02;

// libvips' operation cache keeps decoded images between calls for speed we do not need, and one thread per
// image is plenty for 256 pixels: several uploads at once then cost a thread and a strip of pixels each, and
// libuv's pool (4 threads) bounds how many run together. This is the process's only use of sharp.
sharp.cache(false);
sharp.concurrency(1);

export interface LogoUpload {
  bytes: Buffer;
  filename: string;
  /** The content type the browser declared for the file. */
  contentType: string;
  /** The file went past MAX_LOGO_BYTES and was cut there. */
  tooLarge: boolean;
}

export function logoRefused(message: string): ApiError {
  return new ApiError('logo_refused', { message, field: 'logo' });
}

/** The logo as the service will serve it, or an ApiError `logo_refused` naming what is wrong. */
export async function acceptLogo(upload: LogoUpload): Promise<Buffer> {
  const format = checkFile(upload);
  const meta = await sharp(upload.bytes, { limitInputPixels: false })
    .metadata()
    .catch(() => {
      throw damaged(format);
    });
  const width = meta.width ?? 0;
  const height = meta.height ?? 0;
  if (width * height > MAX_PIXELS || width === 0 || height === 0) {
    throw logoRefused(
      `The image says it is ${width} × ${height} pixels; a logo may have at most ${MAX_LOGO_SIDE} × ${MAX_LOGO_SIDE}. Save it smaller, 512 × 512 for example, and upload it again.`,
    );
  }
  if ((meta.pages ?? 1) > 1) throw animated();
  if (Math.abs(width - height) / Math.max(width, height) > SQUARE_TOLERANCE) {
    throw logoRefused(
      `The image is ${width} × ${height} pixels, not square. Crop it to a square (the sides may differ by at most 2 %) and upload it again.`,
    );
  }
  return reencode(upload.bytes).catch(() => {
    throw damaged(format);
  });
}

/** What the bytes, the name and the declared type tell before any decoding. */
function checkFile(upload: LogoUpload): LogoFormat {
  if (upload.tooLarge) {
    throw logoRefused(
      'The file is larger than 1 MiB. Save the logo smaller (512 × 512 pixels is plenty) and upload it again.',
    );
  }
  if (upload.bytes.length === 0) {
    throw logoRefused(
      upload.filename
        ? 'The file is empty. Choose the image file of your logo and upload it again.'
        : 'Choose the image file of your logo, then upload it.',
    );
  }
  const sniffed = sniffFormat(upload.bytes);
  if ('refused' in sniffed) {
    if (sniffed.refused === 'SVG') {
      throw logoRefused(
        'SVG logos are not accepted: export your logo as a square PNG of at least 256 × 256 pixels and upload that.',
      );
    }
    throw logoRefused(
      sniffed.refused
        ? `${sniffed.refused} logos are not accepted: save your logo as a PNG, JPEG or WebP image and upload that.`
        : 'This file is not a PNG, JPEG or WebP image. Save your logo in one of those formats and upload it again.',
    );
  }
  const { format } = sniffed;
  const name = FORMAT_NAMES[format];
  if (!nameMatches(format, upload.filename)) {
    const extension = extensionOf(upload.filename);
    throw logoRefused(
      `The file holds a ${name} image, but its name ${extension ? `ends in .${extension}` : 'has no extension'}. Rename it to end in ${extensionsInWords(format)}, or save it as the format its name says, and upload it again.`,
    );
  }
  if (!declaredTypeMatches(format, upload.contentType)) {
    throw logoRefused(
      `The file holds a ${name} image, but it was sent as ${upload.contentType.slice(0, 60)}. Save it again as a ${name} file and upload that.`,
    );
  }
  if (format === 'png' && isAnimatedPng(upload.bytes)) throw animated();
  return format;
}

/**
 * Decoding proper: the pixel limit again (a second guard behind the header's check), a broken or truncated
 * file refused rather than half drawn, read in one pass. `.rotate()` applies the EXIF orientation a phone
 * photo carries, since the metadata that says it is dropped: sharp keeps none unless asked.
 */
function reencode(bytes: Buffer): Promise<Buffer> {
  return sharp(bytes, {
    limitInputPixels: MAX_PIXELS,
    failOn: 'error',
    sequentialRead: true,
    animated: false,
  })
    .rotate()
    .resize(LOGO_SIZE, LOGO_SIZE, { fit: 'cover' })
    .webp({ quality: 90 })
    .toBuffer();
}

function animated(): ApiError {
  return logoRefused('Animated logos are not accepted: upload a still PNG, JPEG or WebP image.');
}

function damaged(format: LogoFormat): ApiError {
  const name = FORMAT_NAMES[format];
  return logoRefused(
    `The file could not be read as a ${name} image; it may be damaged. Save it again and upload the new file.`,
  );
}
