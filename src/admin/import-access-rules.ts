import type { Access } from '../auth/access.js';
import type { Queryable } from '../db/index.js';
import { EQUIPMENT, TELEMETRY_KINDS } from '../equipment.js';
import { HttpError } from '../errors.js';
import type { ProvisioningDocument, SitedIn } from '../provisioning/document.js';

// Who may import which alarm rules (contract 16): a rule is of its equipment's site. An admin whose
// sites are a list may import a rule only when that equipment (in the document, or where it is now)
// is at one of its sites, and only over a rule that is at one of its sites now.

const refuse = (path: string) =>
  new HttpError(403, 'no access to one or more of the sites this document touches', [
    { path, message: 'outside the sites of this administrator' },
  ]);

export async function authorizeAlarmRules(
  db: Queryable,
  doc: ProvisioningDocument,
  actor: Access,
): Promise<void> {
  const rules = doc.alarmRules ?? [];
  if (!rules.length || actor.siteIds === null) return;
  for (const kind of TELEMETRY_KINDS) {
    const { list, listIdField, table, idColumn } = EQUIPMENT[kind];
    const inDoc = new Map(
      ((doc[list as keyof ProvisioningDocument] ?? []) as readonly SitedIn[]).map((r) => [
        Number(r[listIdField]),
        r.SiteID,
      ]),
    );
    const ids = rules.map((r) => r[listIdField]).filter((v): v is number => typeof v === 'number');
    if (!ids.length) continue;
    const now = new Map(
      (
        await db.query<{ id: number; site: number }>(
          `SELECT ${idColumn} AS id, site_id AS site FROM ${table} WHERE ${idColumn} = ANY($1::int[])`,
          [ids],
        )
      ).map((r) => [r.id, r.site]),
    );
    rules.forEach((r, i) => {
      const id = r[listIdField];
      if (typeof id !== 'number') return;
      const site = inDoc.get(id) ?? now.get(id);
      if (site !== undefined && !actor.canReachSite(site))
        throw refuse(`/alarmRules/${i}/${listIdField}`);
    });
  }
  const existing = await db.query<{ id: number; site: number }>(
    `SELECT rule_id AS id, site_id AS site FROM alarm_rules WHERE rule_id = ANY($1::int[])`,
    [rules.map((r) => r.AlarmRuleID)],
  );
  const siteOf = new Map(existing.map((r) => [r.id, r.site]));
  rules.forEach((r, i) => {
    const site = siteOf.get(r.AlarmRuleID);
    if (site !== undefined && !actor.canReachSite(site))
      throw refuse(`/alarmRules/${i}/AlarmRuleID`);
  });
}
