import { requireSites, type Access } from '../../auth/access.js';
import type { Queryable } from '../../db/index.js';
import { toDto, type AlarmRuleOut } from './definition.js';
import { listSiteRules } from './repository.js';

/** GET /v1/alarms/rules: the rules of a site the client reaches (403 otherwise), every field filled. */
export async function listAlarmRules(
  db: Queryable,
  access: Access,
  siteId: number,
): Promise<AlarmRuleOut[]> {
  await requireSites(db, access, [siteId]);
  return (await listSiteRules(db, siteId)).map(toDto);
}
