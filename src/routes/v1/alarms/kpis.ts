import type { FastifyTypebox, TypedHandler } from '../../../http.js';
import { securedErrors } from '../../../schemas/common.js';
import { alarmKpis, type AlarmKpis, type KeyCount } from '../../../alarms/kpis.js';
import { MAX_RANGE_DAYS } from '../../../alarms/list.js';
import type { Values } from '../../../export/records.js';
import { negotiate, sendRecords } from '../records.js';
import { jsonOrCsv } from '../transactions/schema.js';
import { AlarmKpisDto, AlarmKpisRequestDto } from './kpis-schema.js';

// Alarm performance (contract 16): POST /v1/alarms/kpis, JSON or CSV (contract 6).

const FIELDS = [
  'SiteID',
  'Raised',
  'AveragePer10Min',
  'Peak10Min',
  'FloodPercent',
  'Standing',
  'MeanSecondsToAcknowledge',
  'TopAlarms',
  'Chattering',
] as const satisfies readonly (keyof AlarmKpis)[];

/** A key in one CSV field: `<EquipmentTypeID>:<EquipmentID>:<AlarmType>=<Count>` (null as empty). */
const keyText = (k: KeyCount) =>
  `${k.EquipmentTypeID ?? ''}:${k.EquipmentID ?? ''}:${k.AlarmType}=${k.Count}`;

async function* onePage(rows: Values[]): AsyncGenerator<Values[]> {
  yield rows;
}

const kpisSchema = (max: number) => ({
  operationId: 'loadAlarmKpis',
  tags: ['alarms'],
  summary: 'Alarm performance of sites over a range (ISA-18.2 / EEMUA 191)',
  description:
    'One AlarmKpisDto per requested site, in request order. An alarm counts when its RaisedAt (when the service raised ' +
    'it) lies in [start, end) (end exclusive, after start, at most ' +
    `${MAX_RANGE_DAYS} days later). The windows are the 10-minute UTC-aligned windows overlapping [start, end), partial ` +
    'ones included. Every site must be reachable (else 403). Answers text/csv when Accept prefers it to ' +
    'application/json: a header line of the field names, one line per site, null as an empty field, TopAlarms and ' +
    'Chattering each one field of `<EquipmentTypeID>:<EquipmentID>:<AlarmType>=<Count>` separated by spaces (an empty ' +
    'id for a site alarm), Series left out.',
  body: AlarmKpisRequestDto(max),
  response: {
    200: jsonOrCsv(AlarmKpisDto, 'AlarmKpisDto records, one per site'),
    ...securedErrors(403),
  },
});

const loadKpis: TypedHandler<ReturnType<typeof kpisSchema>> = async (request, reply) => {
  const kpis = await alarmKpis(request.db, request.access!, request.body);
  const answer = negotiate(request);
  const csv = answer.format === 'csv';
  const fields: string[] = [...FIELDS, ...(request.body.series && !csv ? ['Series'] : [])];
  const rows = kpis.map((k) =>
    fields.map((f) => {
      const v = k[f as keyof AlarmKpis];
      return csv && (f === 'TopAlarms' || f === 'Chattering') ? (v as KeyCount[]).map(keyText) : v;
    }),
  );
  return sendRecords(reply, answer, fields, onePage(rows));
};

export async function alarmKpiRoutes(app: FastifyTypebox): Promise<void> {
  app.post(
    '/alarms/kpis',
    { config: { right: 'read' }, schema: kpisSchema(app.settings.MAX_BATCH) },
    loadKpis,
  );
}
