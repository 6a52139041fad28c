import { bearer, type TestContext } from '../helper.js';

// The routes of alarm management (contract 16) for one client: each returns { status, body }.

export function managementClient(ctx: TestContext, token: string) {
  const post = async (path: string, payload: unknown) => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/v1/${path}`,
      headers: { ...bearer(token), 'content-type': 'application/json' },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });
    return { status: res.statusCode, body: res.json() };
  };
  const entries = (ids: string[], note?: string) =>
    ids.map((SiteAlarmLogID) => ({ SiteAlarmLogID, ...(note ? { note } : {}) }));
  return {
    post,
    send: (body: object) => post('edge/alarms', body),
    resolve: (siteId: number, ids: string[], note?: string) =>
      post('edge/alarms/resolve', { siteId, alarms: entries(ids, note) }),
    active: (siteIds: number[]) => post('edge/alarms/active', { siteIds }),
    acknowledge: (siteId: number, ids: string[], note?: string) =>
      post('alarms/acknowledge', { siteId, alarms: entries(ids, note) }),
    shelve: (siteId: number, ids: string[], minutes: number, note?: string) =>
      post('alarms/shelve', { siteId, minutes, alarms: entries(ids, note) }),
    unshelve: (siteId: number, ids: string[], note?: string) =>
      post('alarms/unshelve', { siteId, alarms: entries(ids, note) }),
    list: (body: object) => post('alarms/list', { page: 1, perPage: 500, ...body }),
    journal: (body: object) => post('alarms/journal', { page: 1, perPage: 500, ...body }),
  };
}
export type ManagementClient = ReturnType<typeof managementClient>;

/** A range around now wide enough for everything a suite raises. */
export const aroundNow = () => ({
  start: new Date(Date.now() - 3_600_000).toISOString(),
  end: new Date(Date.now() + 3_600_000).toISOString(),
});
