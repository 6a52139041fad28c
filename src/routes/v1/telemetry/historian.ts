import type { FastifyTypebox } from '../../../http.js';
import { openInterpolated } from '../../../telemetry/download/interpolated.js';
import { openPlot } from '../../../telemetry/download/plot.js';
import { answerDownload } from './download.js';
import { INTERPOLATED_ROUTE, PLOT_ROUTE } from './historian-schema.js';

// Contract 13: interpolated values and plot values of sensors.

export async function historianRoutes(app: FastifyTypebox): Promise<void> {
  app.post(
    '/sensors/logs/interpolated',
    INTERPOLATED_ROUTE,
    async function loadSensorInterpolatedValues(request, reply) {
      return answerDownload(request, reply, openInterpolated);
    },
  );

  app.post('/sensors/logs/plot', PLOT_ROUTE, async function loadSensorPlotValues(request, reply) {
    return answerDownload(request, reply, openPlot);
  });
}
