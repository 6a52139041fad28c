import { Type, type Static } from '@sinclair/typebox';
import type { Queryable } from '../db/index.js';
import { SEVERITIES } from '../alarms/record.js';
import { IntId } from '../schemas/common.js';
import { ImportError } from './checks.js';
import type { ProvisioningDocument } from './document.js';

// The document's `notificationChannels` and `notificationPolicies` (contract 16): where alarm
// notifications go (a signed webhook, or email) and which alarms go there, step after step. A
// channel's Secret is written to the database and never read back by any route or log.

const ChannelId = Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9_-]+$' });

export const NotificationChannelSchema = Type.Object({
  ChannelID: ChannelId,
  Type: Type.Union([Type.Literal('webhook'), Type.Literal('email')]),
  Url: Type.Optional(Type.String({ minLength: 8, maxLength: 2000, pattern: '^https?://' })),
  Secret: Type.Optional(
    Type.String({
      minLength: 16,
      maxLength: 200,
      description: 'webhook signing key; never returned',
    }),
  ),
  To: Type.Optional(
    Type.Array(
      Type.String({ minLength: 3, maxLength: 320, pattern: '^[^@\\s<>,;]+@[^@\\s<>,;]+$' }),
      {
        minItems: 1,
        maxItems: 50,
      },
    ),
  ),
  Deleted: Type.Optional(Type.Boolean({ description: 'true removes the channel' })),
});

export const NotificationPolicySchema = Type.Object({
  PolicyID: Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9_-]+$' }),
  SiteIDs: Type.Union([Type.Array(IntId, { maxItems: 10_000 }), Type.Literal('*')]),
  MinSeverity: Type.Union(SEVERITIES.map((s) => Type.Literal(s))),
  Steps: Type.Array(
    Type.Object({
      AfterMinutes: Type.Integer({ minimum: 0, maximum: 10_080 }),
      ChannelIDs: Type.Array(ChannelId, { minItems: 1, maxItems: 20 }),
    }),
    { minItems: 1, maxItems: 10 },
  ),
  RepeatMinutes: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_080 })),
  Deleted: Type.Optional(Type.Boolean({ description: 'true removes the policy' })),
});

export type NotificationChannelIn = Static<typeof NotificationChannelSchema>;
export type NotificationPolicyIn = Static<typeof NotificationPolicySchema>;

/** The checks the schema cannot make; throws ImportError naming the record. */
export async function checkNotifications(tx: Queryable, doc: ProvisioningDocument): Promise<void> {
  const channels = doc.notificationChannels ?? [];
  channels.forEach((c, i) => {
    const path = `notificationChannels[${i}]`;
    if (c.Deleted) return;
    if (c.Type === 'webhook' && !c.Url)
      throw new ImportError(`${path}.Url`, 'a webhook needs a Url');
    if (c.Type === 'webhook' && c.To) throw new ImportError(`${path}.To`, 'only for email');
    if (c.Type === 'email' && !c.To)
      throw new ImportError(`${path}.To`, 'an email channel needs To');
    if (c.Type === 'email' && (c.Url || c.Secret))
      throw new ImportError(`${path}.${c.Url ? 'Url' : 'Secret'}`, 'only for webhooks');
  });
  const inDoc = new Map(channels.map((c) => [c.ChannelID, !c.Deleted]));
  const named = [
    ...new Set(
      (doc.notificationPolicies ?? []).flatMap((p) => p.Steps.flatMap((s) => s.ChannelIDs)),
    ),
  ];
  const stored = new Set(
    (
      await tx.query<{ id: string }>(
        `SELECT channel_id AS id FROM notification_channels WHERE channel_id = ANY($1::text[])`,
        [named],
      )
    ).map((r) => r.id),
  );
  (doc.notificationPolicies ?? []).forEach((p, i) => {
    if (p.Deleted) return;
    p.Steps.forEach((s, j) => {
      if (j > 0 && s.AfterMinutes < p.Steps[j - 1].AfterMinutes)
        throw new ImportError(
          `notificationPolicies[${i}].Steps[${j}].AfterMinutes`,
          'must not be less than the step before',
        );
      s.ChannelIDs.forEach((id, k) => {
        if (!(inDoc.get(id) ?? stored.has(id)))
          throw new ImportError(
            `notificationPolicies[${i}].Steps[${j}].ChannelIDs[${k}]`,
            `unknown channel ${id}`,
          );
      });
    });
  });
}

/** Writes the channels and policies in the import's transaction; returns how many of each changed. */
export async function upsertNotifications(
  tx: Queryable,
  doc: ProvisioningDocument,
): Promise<{ channels: number; policies: number }> {
  const channels = doc.notificationChannels ?? [];
  const policies = doc.notificationPolicies ?? [];
  let c = 0;
  let p = 0;
  for (const ch of channels) {
    if (ch.Deleted) {
      c += (
        await tx.query(`DELETE FROM notification_channels WHERE channel_id = $1 RETURNING 1`, [
          ch.ChannelID,
        ])
      ).length;
      continue;
    }
    await tx.query(
      `INSERT INTO notification_channels (channel_id, type, url, secret, recipients) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (channel_id) DO UPDATE SET type = EXCLUDED.type, url = EXCLUDED.url, secret = EXCLUDED.secret,
         recipients = EXCLUDED.recipients, updated_at = now()`,
      [ch.ChannelID, ch.Type, ch.Url ?? null, ch.Secret ?? null, ch.To ?? []],
    );
    c++;
  }
  for (const po of policies) {
    if (po.Deleted) {
      p += (
        await tx.query(`DELETE FROM notification_policies WHERE policy_id = $1 RETURNING 1`, [
          po.PolicyID,
        ])
      ).length;
      continue;
    }
    const steps = po.Steps.map((s) => ({ after: s.AfterMinutes, channels: s.ChannelIDs }));
    await tx.query(
      `INSERT INTO notification_policies (policy_id, site_ids, min_severity, steps, repeat_minutes) VALUES ($1, $2, $3, $4::jsonb, $5)
       ON CONFLICT (policy_id) DO UPDATE SET site_ids = EXCLUDED.site_ids, min_severity = EXCLUDED.min_severity,
         steps = EXCLUDED.steps, repeat_minutes = EXCLUDED.repeat_minutes, updated_at = now()`,
      [
        po.PolicyID,
        po.SiteIDs === '*' ? null : po.SiteIDs,
        po.MinSeverity,
        JSON.stringify(steps),
        po.RepeatMinutes ?? 0,
      ],
    );
    p++;
  }
  return { channels: c, policies: p };
}
