import { Type } from '@sinclair/typebox';
import { ClientIds, ClientRole } from '../../../schemas/clients.js';

export const MeDto = Type.Object(
  {
    clientId: Type.String(),
    role: ClientRole,
    admin: Type.Boolean({ description: 'whether it may use /v1/admin (with the role full)' }),
    siteIds: ClientIds('site'),
    cameraIds: ClientIds('camera'),
  },
  {
    title: 'MeDto',
    description: "The token's client: what it may do and reach (never its secret)",
  },
);
