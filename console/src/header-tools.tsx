import { browserZone, type ZoneChoice } from './format.js';
import { chooseTheme, useTheme } from './theme.js';
import { chooseZone, useZone } from './zone.js';

// The header's time zone (every time shown and typed is in it) and the light/dark toggle.

export function ZonePicker() {
  const z = useZone();
  const options: { value: ZoneChoice; label: string }[] = [
    {
      value: 'site',
      label: z.siteZone ? `Site (${z.siteZone})` : 'Site (UTC without a single site)',
    },
    { value: 'browser', label: `Browser (${browserZone()})` },
    { value: 'utc', label: 'UTC' },
  ];
  return (
    <span class="zone">
      <label for="zone-choice">Time zone</label>
      <select
        id="zone-choice"
        value={z.choice}
        onChange={(e) => chooseZone(e.currentTarget.value as ZoneChoice)}
      >
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      <output
        class="zone-now"
        aria-label="Times are shown in"
        title={z.fallback ? 'Several sites or none in view: UTC' : undefined}
      >
        {z.zone}
      </output>
    </span>
  );
}

export function ThemeToggle() {
  const theme = useTheme();
  return (
    <button
      type="button"
      class="theme"
      aria-pressed={theme === 'dark'}
      onClick={() => chooseTheme(theme === 'dark' ? 'light' : 'dark')}
    >
      Dark theme
    </button>
  );
}
