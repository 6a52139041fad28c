import { Type } from '@sinclair/typebox';
import type { FastifyTypebox, TypedHandler } from '../http.js';
import { unauthorized } from '../errors.js';
import { errorResponses } from '../schemas/common.js';
import { findClient } from '../auth/clients.js';
import { DUMMY_HASH_PROMISE, verifySecret } from '../auth/secrets.js';

export const IssueTokenDto = Type.Object(
  {
    clientId: Type.String({ minLength: 1, maxLength: 200 }),
    clientSecret: Type.String({ minLength: 1, maxLength: 1000 }),
  },
  { title: 'IssueTokenDto' },
);

export const IssueTokenResponseDto = Type.Object(
  {
    accessToken: Type.String(),
    tokenType: Type.Literal('Bearer'),
    expiresIn: Type.Integer({ description: 'seconds' }),
  },
  { title: 'IssueTokenResponseDto' },
);

const issueTokenSchema = {
  operationId: 'issueToken',
  tags: ['auth'],
  // Public: the token is what this answers.
  security: [],
  summary: 'Exchange client credentials for a bearer token (JWT)',
  description:
    'Unknown client, wrong secret or a disabled client: 401, alike. Rate-limited per IP address.',
  body: IssueTokenDto,
  response: { 200: IssueTokenResponseDto, ...errorResponses(400, 401, 413, 429) },
};

const issueToken: TypedHandler<typeof issueTokenSchema> = async (request) => {
  const { clientId, clientSecret } = request.body;
  const client = await findClient(request.db, clientId);
  // Unknown ids pay for a hash check too, so timing does not tell which ids exist.
  const ok = await verifySecret(clientSecret, client?.secretHash ?? (await DUMMY_HASH_PROMISE));
  if (!client || !ok || client.disabled) throw unauthorized('unknown client or wrong secret');
  return request.server.tokens.issue(client.clientId, client.tokensNotBefore);
};

export async function tokenRoutes(app: FastifyTypebox): Promise<void> {
  app.post('/token', { schema: issueTokenSchema }, issueToken);
}
