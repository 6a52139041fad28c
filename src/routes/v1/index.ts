import type { FastifyTypebox } from '../../http.js';
import { checkBeforeBody, declareRights, requireAccess } from '../../plugins/auth.js';
import { siteRoutes } from './sites/index.js';
import { configRoutes } from './config/index.js';
import { telemetryRoutes } from './telemetry/index.js';
import { downloadRoutes } from './telemetry/download.js';
import { historianRoutes } from './telemetry/historian.js';
import { alarmRoutes } from './alarms/index.js';
import { alarmLifecycleRoutes } from './alarms/lifecycle.js';
import { alarmKpiRoutes } from './alarms/kpis.js';
import { alarmRuleRoutes } from './alarms/rules.js';
import { transactionRoutes } from './transactions/index.js';
import { imageRoutes } from './images/index.js';
import { adminRoutes } from './admin/index.js';
import { streamRoutes } from './stream/index.js';
import { meRoutes } from './me/index.js';

/**
 * The whole /v1 API, one area a line. Every route here needs a valid bearer token, and names the
 * right it needs in its `config.right` (src/auth/roles.ts; docs/development.md).
 */
export async function v1Routes(app: FastifyTypebox): Promise<void> {
  checkBeforeBody(app, requireAccess);
  declareRights(app);
  app.addHook('onRoute', (route) => {
    route.schema = { security: [{ bearer: [] }], ...route.schema };
  });

  await app.register(siteRoutes);
  await app.register(configRoutes, { prefix: '/config' });
  await app.register(telemetryRoutes);
  await app.register(downloadRoutes);
  await app.register(historianRoutes);
  await app.register(alarmRoutes);
  await app.register(alarmLifecycleRoutes);
  await app.register(alarmKpiRoutes);
  await app.register(alarmRuleRoutes);
  await app.register(transactionRoutes);
  await app.register(imageRoutes);
  await app.register(adminRoutes, { prefix: '/admin' });
  await app.register(streamRoutes);
  await app.register(meRoutes);
}
