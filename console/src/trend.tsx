import { useState } from 'preact/hooks';
import type { Kind, Site } from './api-schema.js';
import { fetchChart, plotParts, type ChartRequest, type ChartRows } from './chart-data.js';
import { Chart, lineColor } from './chart.js';
import type { Go } from './chart-filters.js';
import type { ChartView } from './chart-view.js';
import { formatTime } from './format.js';
import { Status, useLoad } from './load.js';
import { KIND_LABEL, loadSiteEquipment, type Equipment, type SiteEquipment } from './model.js';
import {
  basesOf,
  FIELDS,
  fieldOf,
  MAX_PENS,
  PEN_COLORS,
  penKey,
  toTrend,
  trendCsv,
  writePens,
  type Basis,
  type Pen,
  type PenInfo,
} from './pens.js';
import { SiteSelect } from './site-select.js';
import { useTheme } from './theme.js';

// The multi-pen trend of the charts page: its pens (each with its basis), a form to add one, and
// the chart of them all on one time axis with a y axis per unit; CSV of what is drawn.

const BASIS_LABEL: Record<Basis, string> = {
  sample: 'Sample average',
  time: 'Time-weighted',
  raw: 'Raw values',
};

/** The download a pen draws from (several pens of one equipment and basis share one). */
function requestOf(
  p: Pen,
  span: Omit<ChartRequest, 'kind' | 'id' | 'basis' | 'raw'>,
): ChartRequest {
  return {
    ...span,
    kind: p.kind,
    id: p.id,
    basis: p.basis === 'time' ? 'timeWeighted' : 'eventWeighted',
    raw: p.basis === 'raw',
  };
}

/** A pen's name as the legend, the list and the CSV header show it. */
export function penInfo(pen: Pen, config: SiteEquipment | undefined): PenInfo {
  const equipment = config?.equipment.find((e) => e.kind === pen.kind && e.id === pen.id);
  const field = fieldOf(pen);
  const unit = equipment && field?.unit(equipment);
  const basis = pen.basis === 'time' ? ', time-weighted' : pen.basis === 'raw' ? '' : '';
  const name = `${config?.site.Name ?? `Site ${pen.site}`} · ${equipment?.name ?? `${pen.kind} ${pen.id}`} · ${field?.label ?? pen.field}${basis}`;
  return { pen, label: unit ? `${name} (${unit})` : name, unit: unit || undefined, equipment };
}

export function TrendPanel({
  view,
  pens,
  configs,
  sites,
  zone,
  width,
  go,
}: {
  view: ChartView;
  pens: Pen[];
  /** The configuration of each site the pens are of. */
  configs: Map<number, SiteEquipment>;
  sites: Site[] | undefined;
  zone: string;
  width: number;
  go: Go;
}) {
  const { from, to, interval } = view;
  const theme = useTheme();
  const rawAllowed = to - from <= 366 * 86_400_000;
  const setPens = (next: Pen[]) => go({ pens: writePens(next) });
  const infos = pens.map((p) => penInfo(p, configs.get(p.site)));
  const span = {
    start: new Date(from).toISOString(),
    end: new Date(to).toISOString(),
    interval,
    timeZone: zone,
    intervals: plotParts(width),
  };
  const keyOf = (p: Pen) => JSON.stringify(requestOf(p, span));
  const keys = [...new Set(pens.map(keyOf))];
  const ready = to > from && width > 0 && pens.length > 0;
  const caption = `Trend of ${pens.length} pen${pens.length === 1 ? '' : 's'}: ${interval} summaries${pens.some((p) => p.basis === 'raw') ? ' and raw values' : ''}, ${formatTime(from, zone)} to ${formatTime(to, zone)} (${zone})`;
  const data = useLoad(
    async (signal) => {
      if (!ready) return undefined;
      const answers = new Map<string, ChartRows>();
      await Promise.all(
        keys.map(async (k) => {
          const res = await fetchChart(JSON.parse(k), 'application/json', signal);
          answers.set(k, (await res.json()) as ChartRows);
        }),
      );
      return {
        ...toTrend(infos, answers, keyOf),
        caption,
        span: [from / 1000, to / 1000] as [number, number],
      };
    },
    [keys.join('|'), ready, caption, infos.map((i) => i.label).join('|')],
  );
  const downloadCsv = (csv: string) => {
    const a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([csv], { type: 'text/csv' }));
    a.download = `trend-${pens.length}-pens.csv`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  };

  return (
    <>
      <h2>Pens</h2>
      <ol class="pens">
        {infos.map((info, i) => (
          <li key={penKey(info.pen)}>
            <span
              class="swatch"
              style={{ background: lineColor(PEN_COLORS[i], theme) }}
              aria-hidden="true"
            />
            <span class="pen-name">{info.label}</span>
            <select
              aria-label={`Basis of ${info.label}`}
              value={info.pen.basis}
              onChange={(e) => {
                const basis = e.currentTarget.value as Basis;
                const field =
                  basis === 'raw' ? 'value' : info.pen.basis === 'raw' ? 'avg' : info.pen.field;
                setPens(pens.map((p, j) => (j === i ? { ...p, basis, field } : p)));
              }}
            >
              {basesOf(
                info.pen.kind,
                info.pen.basis === 'raw' ? 'avg' : info.pen.field,
                rawAllowed,
              ).map((b) => (
                <option key={b} value={b}>
                  {BASIS_LABEL[b]}
                </option>
              ))}
            </select>
            <button
              type="button"
              class="secondary"
              aria-label={`Remove ${info.label}`}
              onClick={() => setPens(pens.filter((_, j) => j !== i))}
            >
              Remove
            </button>
          </li>
        ))}
      </ol>
      {pens.length < MAX_PENS ? (
        <AddPen
          sites={sites}
          rawAllowed={rawAllowed}
          onAdd={(p) => !pens.some((q) => penKey(q) === penKey(p)) && setPens([...pens, p])}
        />
      ) : (
        <p class="muted">{MAX_PENS} pens at most: remove one to add another.</p>
      )}

      {to <= from ? (
        <p class="error" role="alert">
          The end of the range must be after its start.
        </p>
      ) : (
        pens.length > 0 && (
          <Status load={data} what="the trend">
            {(d) =>
              d && (
                <figure>
                  <figcaption>
                    {d.caption} · {d.rows} instants
                  </figcaption>
                  {d.rows ? (
                    <Chart
                      x={d.x}
                      series={d.series}
                      axes={d.axes}
                      zone={zone}
                      span={d.span}
                      label={`Trend of ${pens.length} pens`}
                    />
                  ) : (
                    <p class="muted">No data in this range.</p>
                  )}
                  <button type="button" disabled={!d.rows} onClick={() => downloadCsv(trendCsv(d))}>
                    Download CSV
                  </button>
                </figure>
              )
            }
          </Status>
        )
      )}
    </>
  );
}

/** The form that adds a pen: a site, one of its pieces of equipment, a field and a basis. */
function AddPen({
  sites,
  rawAllowed,
  onAdd,
}: {
  sites: Site[] | undefined;
  rawAllowed: boolean;
  onAdd: (p: Pen) => void;
}) {
  const [site, setSite] = useState(0);
  const [picked, setPicked] = useState('');
  const [field, setField] = useState('');
  const [basis, setBasis] = useState<Basis>('sample');
  const equipment = useLoad(
    (signal) => (site ? loadSiteEquipment(site, signal) : Promise.resolve(undefined)),
    [site],
  );
  const [kind, id] = picked.split(':') as [Kind | '', string];
  const fields = kind ? Object.entries(FIELDS[kind]) : [];
  const bases = kind && field ? basesOf(kind, field, rawAllowed) : [];
  return (
    <fieldset class="filters add-pen">
      <legend>Add a pen</legend>
      <div>
        <SiteSelect
          id="pen-site"
          value={site}
          sites={sites}
          none="Choose a site"
          onChange={(v) => {
            setSite(Number(v));
            setPicked('');
            setField('');
          }}
        />
      </div>
      <div>
        <label for="pen-equipment">Equipment</label>
        <select
          id="pen-equipment"
          value={picked}
          disabled={!equipment.data}
          onChange={(e) => {
            const v = e.currentTarget.value;
            setPicked(v);
            const k = v.split(':')[0] as Kind | '';
            setField(k ? Object.keys(FIELDS[k])[0] : '');
            setBasis('sample');
          }}
        >
          <option value="">Choose equipment</option>
          {(Object.keys(KIND_LABEL) as Kind[]).map((k) => (
            <optgroup key={k} label={KIND_LABEL[k]}>
              {equipment.data?.equipment
                .filter((e: Equipment) => e.kind === k)
                .map((e: Equipment) => (
                  <option key={e.id} value={`${k}:${e.id}`}>
                    {e.name}
                  </option>
                ))}
            </optgroup>
          ))}
        </select>
      </div>
      <div>
        <label for="pen-field">Field</label>
        <select
          id="pen-field"
          value={field}
          disabled={!kind}
          onChange={(e) => {
            setField(e.currentTarget.value);
            setBasis('sample');
          }}
        >
          {fields.map(([k, f]) => (
            <option key={k} value={k}>
              {f.label}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label for="pen-basis">Basis</label>
        <select
          id="pen-basis"
          value={basis}
          disabled={!kind}
          onChange={(e) => setBasis(e.currentTarget.value as Basis)}
        >
          {bases.map((b) => (
            <option key={b} value={b}>
              {BASIS_LABEL[b]}
            </option>
          ))}
        </select>
      </div>
      <div>
        <button
          type="button"
          disabled={!kind || !field}
          onClick={() =>
            kind &&
            onAdd({
              site,
              kind,
              id: Number(id),
              field: basis === 'raw' ? 'value' : field,
              basis,
            })
          }
        >
          Add pen
        </button>
      </div>
    </fieldset>
  );
}
