import { Type } from '@sinclair/typebox';
import { ROLE_TEXT, ROLES } from '../auth/roles.js';
import { IntId } from './common.js';

// A client's grants as the admin API, the provisioning document and GET /v1/me show them.

/** A client's site or camera ids, or "*" for every one. */
export const ClientIds = (what: string, maxItems = 10_000) =>
  Type.Union([Type.Array(IntId, { maxItems }), Type.Literal('*')], {
    description: `${what} ids, or "*" for every ${what}`,
  });

/** What a client may do besides reaching its sites and cameras (contract 16). */
export const ClientRole = Type.Union(
  ROLES.map((r) => Type.Literal(r)),
  {
    title: 'ClientRole',
    description: `What the client may do: ${ROLES.map((r) => `${r}: ${ROLE_TEXT[r]}`).join('; ')}. Anything else the role lacks: 403`,
  },
);
