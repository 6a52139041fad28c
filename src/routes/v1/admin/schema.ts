import { Type } from '@sinclair/typebox';
import { CLIENT_ID_PATTERN } from '../../../auth/clients.js';
import { DateTimeOutput, Paginated } from '../../../schemas/common.js';
import { ClientIds as Ids, ClientRole } from '../../../schemas/clients.js';
import { ProvisioningDocument } from '../../../provisioning/document.js';
const ClientId = Type.String({
  pattern: CLIENT_ID_PATTERN,
  description: '1 to 200 letters, digits or . _ : @ -',
});

export const ClientDto = Type.Object(
  {
    clientId: Type.String(),
    siteIds: Ids('site'),
    cameraIds: Ids('camera'),
    admin: Type.Boolean(),
    role: ClientRole,
    disabled: Type.Boolean(),
    createdAt: DateTimeOutput,
    updatedAt: DateTimeOutput,
  },
  {
    title: 'ClientDto',
    description:
      'An API client; its secret is never shown (only a slow salted hash of it is stored)',
  },
);

export const ClientPage = Paginated(ClientDto, 'ClientPage');

export const ClientsQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
  perPage: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
});

export const CreateClientDto = Type.Object(
  {
    clientId: ClientId,
    clientSecret: Type.Optional(
      Type.String({
        minLength: 8,
        maxLength: 1000,
        description: 'left out: one is generated and shown once',
      }),
    ),
    siteIds: Ids('site'),
    cameraIds: Type.Optional(Ids('camera')),
    admin: Type.Optional(Type.Boolean({ default: false })),
    role: Type.Optional(ClientRole),
  },
  { title: 'CreateClientDto' },
);

export const CreatedClientDto = Type.Object(
  {
    ...ClientDto.properties,
    clientSecret: Type.Optional(
      Type.String({ description: 'the generated secret; shown only in this answer' }),
    ),
  },
  { title: 'CreatedClientDto' },
);

export const UpdateClientDto = Type.Object(
  {
    siteIds: Type.Optional(Ids('site')),
    cameraIds: Type.Optional(Ids('camera')),
    admin: Type.Optional(Type.Boolean()),
    role: Type.Optional(ClientRole),
    disabled: Type.Optional(
      Type.Boolean({ description: 'true: its tokens answer 401 at once; false: enabled again' }),
    ),
  },
  { title: 'UpdateClientDto', description: 'Only the fields given change; at least one is needed' },
);

export const ClientParams = Type.Object({ clientId: ClientId });

export const ClientSecretDto = Type.Object(
  {
    clientId: Type.String(),
    clientSecret: Type.String({ description: 'shown only in this answer' }),
  },
  { title: 'ClientSecretDto' },
);

export const ImportDocumentDto = Type.Object(ProvisioningDocument.properties, {
  title: 'ProvisioningDocument',
  additionalProperties: false,
  description:
    'Every list is optional; each record is the interface record of that name plus its links',
});

export const ImportSummaryDto = Type.Record(
  Type.String(),
  Type.Object({
    received: Type.Integer(),
    changed: Type.Integer({ description: 'new or different records' }),
  }),
  { title: 'ImportSummaryDto', description: 'per list of the document' },
);
