import { Type } from '@sinclair/typebox';

/** Contract 7: an image bundle holds at most this many images. */
export const MAX_IMAGES = 500;

const UUID_PATTERN =
  '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

export const ImageParams = Type.Object({
  uuid: Type.String({ pattern: UUID_PATTERN, description: 'image UUID' }),
});

/** One image, as the OpenAPI document shows it. */
export const ImageBytes = {
  description: 'the image, its bytes exactly as imported, under its stored content type',
  content: { 'image/*': { schema: { type: 'string', format: 'binary' } } },
  headers: { 'content-length': { type: 'integer', description: 'size of the image' } },
};

export const ImagesPayloadDto = Type.Object(
  {
    uuids: Type.Array(Type.String({ pattern: UUID_PATTERN, description: 'image UUID' }), {
      minItems: 1,
      maxItems: MAX_IMAGES,
      uniqueItems: true,
      description: `1 to ${MAX_IMAGES} UUIDs, each once (letter case ignored)`,
    }),
  },
  { title: 'ImagesPayloadDto' },
);

/** The zip, as the OpenAPI document shows it; the body is a byte stream, never serialized. */
export const ImageBundle = {
  description:
    'a zip (entries stored, not compressed), one entry `<uuid>.<ext>` per requested UUID, in request order',
  content: { 'application/zip': { schema: { type: 'string', format: 'binary' } } },
  headers: {
    'content-disposition': { type: 'string', description: 'attachment; filename="…"' },
    'content-length': { type: 'integer', description: 'exact size of the zip' },
  },
};
