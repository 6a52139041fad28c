import type { Kind, Site } from './api-schema.js';
import { RANGES } from './chart-data.js';
import type { ChartView } from './chart-view.js';
import { toLocalInput } from './format.js';
import { KIND_LABEL, type Equipment } from './model.js';
import { SiteSelect } from './site-select.js';

// The charts page's form: every control changes the URL (`go`), which the page reads back.

/** Changes to the page's query (empty values drop their key). */
export type Go = (changes: Record<string, string | number>) => void;

export function ChartFilters({
  view,
  customFrom,
  customTo,
  sites,
  equipment,
  picked,
  zone,
  go,
}: {
  view: ChartView;
  /** The zone the custom range's times are in. */
  zone: string;
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
      <RangeControls
        view={view}
        customFrom={customFrom}
        customTo={customTo}
        zone={zone}
        noInterval={raw}
        go={go}
      />
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

/** Range presets, a custom range's ends (wall-clock times in the zone shown) and the interval. */
export function RangeControls({
  view,
  customFrom,
  customTo,
  zone,
  noInterval,
  go,
}: {
  view: ChartView;
  customFrom: string | null;
  customTo: string | null;
  zone: string;
  /** Raw values only: no interval to choose. */
  noInterval: boolean;
  go: Go;
}) {
  return (
    <>
      <RangePresets view={view} zone={zone} go={go} />
      {view.range === 'custom' && (
        <>
          <RangeEnd
            id="chart-from"
            label="From"
            zone={zone}
            value={customFrom}
            onPick={(v) => go({ from: v })}
          />
          <RangeEnd
            id="chart-to"
            label="To"
            zone={zone}
            value={customTo}
            onPick={(v) => go({ to: v })}
          />
        </>
      )}
      <div>
        <label for="chart-interval">Interval</label>
        <select
          id="chart-interval"
          value={view.interval}
          disabled={noInterval}
          onChange={(e) => go({ interval: e.currentTarget.value })}
        >
          <option value="15m">15 minutes</option>
          <option value="1h">1 hour</option>
          <option value="1d">1 day</option>
        </select>
      </div>
    </>
  );
}

/** One end of a custom range: a date and time on the clock of the zone shown, as typed. */
function RangeEnd(props: {
  id: string;
  label: string;
  zone: string;
  value: string | null;
  onPick: (value: string) => void;
}) {
  return (
    <div>
      <label for={props.id}>{props.label}</label>
      <input
        title={`${props.label}, ${props.zone} time`}
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

/** The preset ranges and Custom, which starts from the window shown (wall-clock times of the zone). */
function RangePresets({ view, zone, go }: { view: ChartView; zone: string; go: Go }) {
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
                  ? {
                      range: k,
                      from: toLocalInput(view.from, zone),
                      to: toLocalInput(view.to, zone),
                    }
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
