import type { Kind, Site } from './api-schema.js';
import { RANGES } from './chart-data.js';
import type { ChartView } from './chart-view.js';
import { browserZone, toLocalInput, type ZoneChoice } from './format.js';
import { KIND_LABEL, type Equipment } from './model.js';
import { SiteSelect } from './site-select.js';

// The charts page's form: every control changes the URL (`go`), which the page reads back.

/** Changes to the page's query (empty values drop their key). */
type Go = (changes: Record<string, string | number>) => void;

const ZONES: { value: ZoneChoice; label: string }[] = [
  { value: 'site', label: 'Site' },
  { value: 'utc', label: 'UTC' },
  { value: 'browser', label: `Browser (${browserZone()})` },
];

export function ChartFilters({
  view,
  customFrom,
  customTo,
  sites,
  equipment,
  picked,
  go,
}: {
  view: ChartView;
  /** A custom range's ends as the URL has them (local times). */
  customFrom: string | null;
  customTo: string | null;
  sites: Site[] | undefined;
  /** The chosen site's equipment, undefined while it loads or without a site. */
  equipment: Equipment[] | undefined;
  picked: Equipment | undefined;
  go: Go;
}) {
  const { kind, raw, rawAllowed, timeWeighted } = view;
  return (
    <form class="filters" onSubmit={(e) => e.preventDefault()}>
      <div>
        <SiteSelect
          id="chart-site"
          value={view.site}
          sites={sites}
          none="Choose a site"
          onChange={(v) => go({ site: v, kind: '', id: '' })}
        />
      </div>
      <EquipmentSelect equipment={equipment} value={picked ? `${kind}:${view.id}` : ''} go={go} />
      <RangePresets view={view} go={go} />
      {view.range === 'custom' && (
        <>
          <RangeEnd
            id="chart-from"
            label="From"
            value={customFrom}
            onPick={(v) => go({ from: v })}
          />
          <RangeEnd id="chart-to" label="To" value={customTo} onPick={(v) => go({ to: v })} />
        </>
      )}
      <div>
        <label for="chart-interval">Interval</label>
        <select
          id="chart-interval"
          value={view.interval}
          disabled={raw}
          onChange={(e) => go({ interval: e.currentTarget.value })}
        >
          <option value="15m">15 minutes</option>
          <option value="1h">1 hour</option>
          <option value="1d">1 day</option>
        </select>
      </div>
      <div>
        <label for="chart-tz">Time zone</label>
        <select id="chart-tz" value={view.tz} onChange={(e) => go({ tz: e.currentTarget.value })}>
          {ZONES.map((z) => (
            <option key={z.value} value={z.value}>
              {z.label}
            </option>
          ))}
        </select>
      </div>
      {kind && kind !== 'meter' && (
        <div>
          <label for="chart-avg">Average</label>
          <select
            id="chart-avg"
            value={timeWeighted ? 'time' : ''}
            disabled={raw}
            onChange={(e) => go({ avg: e.currentTarget.value })}
          >
            <option value="">Sample average</option>
            <option value="time">Time-weighted</option>
          </select>
        </div>
      )}
      {kind === 'sensor' && (
        <div class="check">
          <input
            id="chart-raw"
            type="checkbox"
            checked={raw}
            disabled={!rawAllowed}
            onChange={(e) => go({ raw: e.currentTarget.checked ? 1 : '' })}
          />
          <label for="chart-raw">Raw values{rawAllowed ? '' : ' (366 days at most)'}</label>
        </div>
      )}
    </form>
  );
}

/** One end of a custom range: a local date and time, as typed. */
function RangeEnd(props: {
  id: string;
  label: string;
  value: string | null;
  onPick: (value: string) => void;
}) {
  return (
    <div>
      <label for={props.id}>{props.label}</label>
      <input
        id={props.id}
        type="datetime-local"
        value={props.value ?? ''}
        onChange={(e) => props.onPick(e.currentTarget.value)}
      />
    </div>
  );
}

/** The site's equipment, grouped by kind; a choice is `kind:id`. */
function EquipmentSelect({
  equipment,
  value,
  go,
}: {
  equipment: Equipment[] | undefined;
  value: string;
  go: Go;
}) {
  return (
    <div>
      <label for="chart-equipment">Equipment</label>
      <select
        id="chart-equipment"
        value={value}
        disabled={!equipment}
        onChange={(e) => {
          const [k, i] = e.currentTarget.value.split(':');
          go({ kind: k ?? '', id: i ?? '' });
        }}
      >
        <option value="">Choose equipment</option>
        {(Object.keys(KIND_LABEL) as Kind[]).map((k) => (
          <optgroup key={k} label={KIND_LABEL[k]}>
            {equipment
              ?.filter((e) => e.kind === k)
              .map((e) => (
                <option key={e.id} value={`${k}:${e.id}`}>
                  {e.name}
                </option>
              ))}
          </optgroup>
        ))}
      </select>
    </div>
  );
}

/** The preset ranges and Custom, which starts from the window shown (as local times). */
function RangePresets({ view, go }: { view: ChartView; go: Go }) {
  return (
    <fieldset class="presets">
      <legend>Range</legend>
      {[...Object.entries(RANGES).map(([k, r]) => [k, r.label]), ['custom', 'Custom']].map(
        ([k, label]) => (
          <button
            type="button"
            key={k}
            aria-pressed={view.range === k}
            onClick={() =>
              go(
                k === 'custom'
                  ? { range: k, from: toLocalInput(view.from), to: toLocalInput(view.to) }
                  : { range: k, interval: '' },
              )
            }
          >
            {label}
          </button>
        ),
      )}
    </fieldset>
  );
}
