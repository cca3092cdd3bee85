/**
 * What a logo file is, told by its first bytes (docs/design.md section 11.3), never by its name or the type
 * the browser declared: those are only checked against it. Only PNG, JPEG and WebP are accepted; a format we
 * recognise otherwise is named in the refusal, so the company knows what to export instead.
 */
export type LogoFormat = 'png' | 'jpeg' | 'webp';

export type Sniffed = { format: LogoFormat } | { refused: string | null };

export const FORMAT_NAMES: Record<LogoFormat, string> = { png: 'PNG', jpeg: 'JPEG', webp: 'WebP' };

/** The extensions a name may end in for each format, and the content types a browser may declare for it. */
const EXTENSIONS: Record<LogoFormat, readonly string[]> = {
  png: ['png'],
  jpeg: ['jpg', 'jpeg'],
  webp: ['webp'],
};
const CONTENT_TYPES: Record<LogoFormat, readonly string[]> = {
  png: ['image/png'],
  jpeg: ['image/jpeg', 'image/jpg', 'image/pjpeg'],
  webp: ['image/webp'],
};
/** What a browser sends when it does not know the type: no claim, so nothing to contradict. */
const NO_CLAIM = new Set(['', 'application/octet-stream']);

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** ISO base media brands (`ftyp`) of the formats refused by name. */
const FTYP_BRANDS: Record<string, string> = {
  avif: 'AVIF',
  avis: 'AVIF',
  heic: 'HEIC',
  heix: 'HEIC',
  heim: 'HEIC',
  heis: 'HEIC',
  hevc: 'HEIC',
  hevx: 'HEIC',
  mif1: 'HEIC',
  msf1: 'HEIC',
  'jxl ': 'JPEG XL',
};

export function sniffFormat(bytes: Uint8Array): Sniffed {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const ascii = (start: number, end: number) => data.subarray(start, end).toString('latin1');
  if (data.subarray(0, 8).equals(PNG_SIGNATURE)) return { format: 'png' };
  if (data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return { format: 'jpeg' };
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return { format: 'webp' };
  if (ascii(0, 4) === 'GIF8') return { refused: 'GIF' };
  if (ascii(4, 8) === 'ftyp') return { refused: FTYP_BRANDS[ascii(8, 12)] ?? null };
  if (ascii(0, 4) === 'II*\0' || ascii(0, 4) === 'MM\0*') return { refused: 'TIFF' };
  if (ascii(0, 2) === 'BM') return { refused: 'BMP' };
  if (ascii(0, 4) === '\0\0\x01\0') return { refused: 'ICO' };
  if (ascii(0, 5) === '%PDF-') return { refused: 'PDF' };
  if (data[0] === 0xff && data[1] === 0x0a) return { refused: 'JPEG XL' };
  if (looksLikeSvg(data)) return { refused: 'SVG' };
  return { refused: null };
}

/** SVG is text: an `<svg` element near the start, after any XML declaration, comments or doctype. */
function looksLikeSvg(data: Buffer): boolean {
  const head = data
    .subarray(0, 4096)
    .toString('utf8')
    .replace(/^\uFEFF/, '');
  return /^\s*</.test(head) && /<svg[\s>]/i.test(head);
}

/** The extension of a file name, lower case, or '' when it has none. */
export function extensionOf(filename: string): string {
  const match = /\.([A-Za-z0-9]{1,8})$/.exec(filename.trim());
  return match ? match[1]!.toLowerCase() : '';
}

export function nameMatches(format: LogoFormat, filename: string): boolean {
  return EXTENSIONS[format].includes(extensionOf(filename));
}

export function declaredTypeMatches(format: LogoFormat, contentType: string): boolean {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return NO_CLAIM.has(type) || CONTENT_TYPES[format].includes(type);
}

/** The extensions to suggest for a format, as a person reads them: ".jpg or .jpeg". */
export function extensionsInWords(format: LogoFormat): string {
  return EXTENSIONS[format].map((extension) => `.${extension}`).join(' or ');
}

/**
 * An animated PNG says so in an `acTL` chunk before its first image data. libvips reads only its first frame,
 * so the re-encoded logo would be still; we refuse it anyway, as we refuse an animated WebP, so that the company
 * learns that customers would not see its animation.
 */
export function isAnimatedPng(bytes: Uint8Array): boolean {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = PNG_SIGNATURE.length;
  while (offset + 8 <= data.length) {
    const length = data.readUInt32BE(offset);
    const type = data.subarray(offset + 4, offset + 8).toString('latin1');
    if (type === 'acTL') return true;
    if (type === 'IDAT' || type === 'IEND') return false;
    offset += 12 + length;
  }
  return false;
}
