import 'leaflet/dist/leaflet.css';
import './site-map.css';
import L from 'leaflet';
import { useEffect, useRef, useState } from 'preact/hooks';
import { feature } from 'topojson-client';
import type { Topology } from 'topojson-specification';
import COUNTRIES_URL from 'world-atlas/countries-110m.json?url';
import STATES_URL from 'us-atlas/states-10m.json?url';
import { navigate } from './router.js';
import { rankOf, STATE_LABEL, WORST_STATES, type WorstState } from './worst-state.js';

// The sites on a map, each marked by its worst state, a click away from its page. The basemap ships
// with the console (no tile server, nothing fetched from elsewhere): country borders of the world
// (Natural Earth 1:110m) and the states of the United States (US Census, 1:10m), both public domain,
// drawn as vector shapes; their files are data the console serves (not JavaScript), fetched when a
// map is first shown.

export interface MappedSite {
  id: number;
  name: string;
  lat: number | null | undefined;
  lng: number | null | undefined;
  state: WorstState;
}

/** A marker's fill per state (worst first), as the list's badges. */
export const STATE_COLOR: Record<WorstState, string> = {
  critical: '#a1170f',
  'comm-loss': '#6b3fa0',
  major: '#d35400',
  alarm: '#c98a1b',
  normal: '#2e7d32',
};

type Shapes = GeoJSON.FeatureCollection | GeoJSON.Feature;

let basemap: Promise<Shapes[]> | undefined;
/** The basemap's shapes, from the console's own files (fetched once, then cached by the browser). */
function loadBasemap(): Promise<Shapes[]> {
  const fetchJson = async (url: string) => {
    const res = await fetch(url);
    if (!res.ok) throw new Error(`${url}: ${res.status}`);
    // TopoJSON, whose types the packages do not declare.
    return (await res.json()) as Topology;
  };
  basemap ??= Promise.all([fetchJson(COUNTRIES_URL), fetchJson(STATES_URL)]).then(
    ([world, states]) => [
      feature(world, world.objects.countries) as Shapes,
      feature(states, states.objects.states) as Shapes,
    ],
  );
  basemap.catch(() => (basemap = undefined));
  return basemap;
}

/** The map of the given sites (those without coordinates are left out, and counted). */
export function SiteMap({ sites }: { sites: MappedSite[] }) {
  const box = useRef<HTMLDivElement>(null);
  const map = useRef<L.Map>();
  const markers = useRef<L.LayerGroup>();
  const fitted = useRef('');
  const bounds = useRef<L.LatLngBounds>();
  const [ready, setReady] = useState(false);

  useEffect(() => {
    if (!box.current) return;
    const m = L.map(box.current, {
      attributionControl: true,
      zoomSnap: 0.5,
      worldCopyJump: true,
      minZoom: 2,
      maxZoom: 12,
    });
    m.attributionControl.setPrefix(false);
    m.attributionControl.addAttribution('Natural Earth · US Census');
    m.setView([30, -95], 3);
    // The basemap in a pane of its own, under the markers whatever loads first.
    m.createPane('basemap').style.zIndex = '350';
    map.current = m;
    markers.current = L.layerGroup().addTo(m);
    let gone = false;
    void loadBasemap().then((shapes) => {
      if (gone) return;
      const back = L.layerGroup();
      for (const [i, shape] of shapes.entries())
        L.geoJSON(shape, {
          pane: 'basemap',
          interactive: false,
          style: {
            className: i === 0 ? 'map-land' : 'map-states',
            weight: i === 0 ? 0.8 : 0.6,
          },
        }).addTo(back);
      back.addTo(m);
      setReady(true);
    });
    // The box changes size after the map is made (the page settles, a banner appears, the window
    // is resized): Leaflet is told, and the sites are fitted again.
    const resized = new ResizeObserver(() => {
      m.invalidateSize({ pan: false });
      if (bounds.current) m.fitBounds(bounds.current, { maxZoom: 9, animate: false });
    });
    resized.observe(box.current);
    return () => {
      gone = true;
      resized.disconnect();
      m.remove();
    };
  }, []);

  const placed = sites.filter(
    (s) => typeof s.lat === 'number' && typeof s.lng === 'number',
  ) as (MappedSite & { lat: number; lng: number })[];

  useEffect(() => {
    const m = map.current;
    const group = markers.current;
    if (!m || !group) return;
    group.clearLayers();
    // Worst last, so that it is drawn on top of the others.
    for (const s of [...placed].sort((a, b) => rankOf(b.state) - rankOf(a.state))) {
      const marker = L.circleMarker([s.lat, s.lng], {
        radius: s.state === 'normal' ? 6 : 8,
        color: '#fff',
        weight: 1.5,
        fillColor: STATE_COLOR[s.state],
        fillOpacity: 0.95,
        className: `site-marker state-${s.state}`,
      })
        .bindTooltip(`${s.name}: ${STATE_LABEL[s.state]}`)
        .on('click', () => navigate(`/sites/${s.id}`));
      marker.addTo(group);
      const el = marker.getElement() as SVGElement | undefined;
      if (el) {
        el.dataset.siteId = String(s.id);
        el.dataset.state = s.state;
        el.setAttribute('aria-label', `${s.name}: ${STATE_LABEL[s.state]}`);
      }
    }
    // The view fits the sites once for each set of sites (not again when only a state changes).
    const key = placed
      .map((s) => s.id)
      .sort((a, b) => a - b)
      .join(',');
    if (key && key !== fitted.current) {
      fitted.current = key;
      bounds.current = L.latLngBounds(placed.map((s) => [s.lat, s.lng])).pad(0.3);
      m.fitBounds(bounds.current, { maxZoom: 9, animate: false });
    }
  }, [sites]);

  const counts = WORST_STATES.map(
    (state) => [state, placed.filter((s) => s.state === state).length] as const,
  );
  return (
    <figure class="site-map">
      <div
        ref={box}
        class="site-map-canvas"
        role="img"
        aria-label={`Map of ${placed.length} site${placed.length === 1 ? '' : 's'}`}
        data-ready={ready ? 'true' : undefined}
      />
      <figcaption>
        <ul class="map-legend">
          {counts.map(([state, n]) => (
            <li key={state}>
              <span class="swatch" data-state={state} /> {STATE_LABEL[state]} ({n})
            </li>
          ))}
        </ul>
        {placed.length < sites.length && (
          <span class="muted">
            {sites.length - placed.length} site{sites.length - placed.length === 1 ? '' : 's'}{' '}
            without coordinates
          </span>
        )}
      </figcaption>
    </figure>
  );
}
