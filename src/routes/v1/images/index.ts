import type { FastifyTypebox, TypedHandler } from '../../../http.js';
import { securedErrors } from '../../../schemas/common.js';
import { prepareBundle, prepareImage, type ImageKind } from '../../../images/bundle.js';
import { ImageBundle, ImageBytes, ImageParams, ImagesPayloadDto, MAX_IMAGES } from './schema.js';

// Interface 4.5, contract 7: ticket photos and gate-camera motion captures as one zip.

/** One kind of image: what its routes are called, and what a client must reach to see one. */
interface ImageRoutes {
  kind: ImageKind;
  operationId: string;
  oneId: string;
  summary: string;
  file: string;
  reach: string;
}

const TICKETS: ImageRoutes = {
  kind: 'ticket',
  operationId: 'downloadTicketImages',
  oneId: 'getTicketImage',
  summary: 'Download ticket images as a zip',
  file: 'ticket-images',
  reach: "the image's site",
};

const MOTION_CAPTURES: ImageRoutes = {
  kind: 'motion',
  operationId: 'downloadMotionCaptureImages',
  oneId: 'getMotionCaptureImage',
  summary: 'Download motion-capture images as a zip',
  file: 'motion-capture-images',
  reach: "the image's site and camera",
};

const oneDescription = (reach: string) =>
  `The image itself, for showing it (the console's thumbnails): the same checks as the zip of one UUID (404 unknown or ` +
  `of the other kind, 403 when the client cannot reach ${reach}, 500 when the stored bytes no longer match their digest), ` +
  `then the bytes under the image's content type. Images never change once stored, so the answer may be cached privately.`;

const description = (reach: string) =>
  `One zip entry per UUID, named \`<uuid>.<ext>\` after the image's content type, holding the bytes exactly as imported. ` +
  `Everything is checked before the first byte is sent: 400 for a malformed UUID, an empty list, a UUID listed twice ` +
  `or more than ${MAX_IMAGES}; 404 when a UUID is unknown or names an image of the other kind (checked first, the same ` +
  `for every client); 403 when the client cannot reach ${reach} for any image (nothing is sent); 500 when stored bytes ` +
  `no longer match the digest they were stored under (nothing is sent). The zip is written while it is sent, an image ` +
  `at a time, with an exact Content-Length.`;

const bundleSchema = (r: ImageRoutes) => ({
  operationId: r.operationId,
  tags: ['transactions'],
  summary: r.summary,
  description: description(r.reach),
  body: ImagesPayloadDto,
  response: { 200: ImageBundle, ...securedErrors(403, 404, 413, 500) },
});

/** The handler that sends the images of a kind as a zip, named after the time of the request. */
const sendBundle =
  (r: ImageRoutes): TypedHandler<ReturnType<typeof bundleSchema>> =>
  async (request, reply) => {
    const bundle = await prepareBundle(request.db, request.access!, r.kind, request.body.uuids);
    const stamp = new Date().toISOString().replace(/[-:]/g, '').slice(0, 15);
    return reply
      .type('application/zip')
      .header('content-length', bundle.size)
      .header('content-disposition', `attachment; filename="${r.file}-${stamp}Z.zip"`)
      .send(bundle.stream);
  };

const oneSchema = (r: ImageRoutes) => ({
  operationId: r.oneId,
  tags: ['transactions'],
  summary: r.summary.replace('Download', 'Show one of the').replace(' as a zip', ''),
  description: oneDescription(r.reach),
  params: ImageParams,
  response: { 200: ImageBytes, ...securedErrors(403, 404, 500) },
});

/** The handler that sends one image of a kind, as itself. */
const sendOne =
  (r: ImageRoutes): TypedHandler<ReturnType<typeof oneSchema>> =>
  async (request, reply) => {
    const { entry, stream } = await prepareImage(
      request.db,
      request.access!,
      r.kind,
      request.params.uuid,
    );
    return reply
      .type(entry.contentType)
      .header('content-length', entry.size)
      .header('cache-control', 'private, max-age=86400, immutable')
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'none'; sandbox")
      .send(stream);
  };

const downloadTicketImages = sendBundle(TICKETS);
const downloadMotionCaptureImages = sendBundle(MOTION_CAPTURES);
const showTicketImage = sendOne(TICKETS);
const showMotionCaptureImage = sendOne(MOTION_CAPTURES);

export async function imageRoutes(app: FastifyTypebox): Promise<void> {
  const read = { right: 'read' } as const;
  app.post(
    '/images/tickets',
    { config: read, schema: bundleSchema(TICKETS) },
    downloadTicketImages,
  );
  app.post(
    '/images/motion-capture',
    { config: read, schema: bundleSchema(MOTION_CAPTURES) },
    downloadMotionCaptureImages,
  );
  app.get('/images/tickets/:uuid', { config: read, schema: oneSchema(TICKETS) }, showTicketImage);
  app.get(
    '/images/motion-capture/:uuid',
    { config: read, schema: oneSchema(MOTION_CAPTURES) },
    showMotionCaptureImage,
  );
}
