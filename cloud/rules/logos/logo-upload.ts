import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type LogoUpload, MAX_LOGO_BYTES } from './logo-image.js';

/**
 * Reading the logo form's `multipart/form-data` (docs/design.md section 11.3), in the scope of the logo routes
 * only: nowhere else does the service take multipart. The body is read before the CSRF check (a preValidation
 * hook), since the page's token travels in the form beside the file and @fastify/csrf-protection reads it from
 * `request.body._csrf` in the pages' preHandler; the token never goes into an address, where logs and history
 * would keep it. Reading first costs at most one file of 1 MiB in memory per request, bounded below, and
 * nothing is decoded or stored until the Origin and the token have been checked.
 */
const LIMITS = {
  fileSize: MAX_LOGO_BYTES,
  files: 1,
  fields: 2,
  parts: 3,
  fieldSize: 512,
  fieldNameSize: 32,
  headerPairs: 8,
};

/** What the form brought: the file (or none), or the sentence saying why it could not be read. */
export type LogoForm = { upload: LogoUpload | null } | { problem: string };

const forms = new WeakMap<FastifyRequest, LogoForm>();

export async function logoUploads(app: FastifyInstance): Promise<void> {
  // A file past the limit is cut and flagged rather than thrown: the page says so beside the field.
  await app.register(multipart, { limits: LIMITS, throwFileSizeLimit: false });
  app.addHook('preValidation', async (request) => {
    if (!request.isMultipart()) return;
    const fields: Record<string, string> = {};
    forms.set(request, await readForm(request, fields));
    request.body = { _csrf: fields._csrf ?? '' };
  });
}

/** The form the request carried; a urlencoded post (no file) reads as a form without a file. */
export function logoForm(request: FastifyRequest): LogoForm {
  return forms.get(request) ?? { upload: null };
}

async function readForm(request: FastifyRequest, fields: Record<string, string>): Promise<LogoForm> {
  let upload: LogoUpload | null = null;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'field') {
        if (typeof part.value === 'string') fields[part.fieldname] = part.value;
      } else if (part.fieldname === 'logo') {
        const bytes = await part.toBuffer();
        upload = {
          bytes,
          filename: part.filename,
          contentType: part.mimetype,
          tooLarge: part.file.truncated,
        };
      } else {
        await part.toBuffer();
      }
    }
  } catch {
    // Over the limits of parts, files or fields, or cut short: nothing a browser sends from this page.
    return {
      problem: 'The form did not arrive as this page sends it. Choose one image file and upload it again.',
    };
  }
  return { upload };
}
