import { useEffect, useState } from 'preact/hooks';

// Light or dark: the browser's preference (prefers-color-scheme) unless the person chose, which
// localStorage keeps. The choice is the `data-theme` attribute of <html>, which style.css reads.

export type Theme = 'light' | 'dark';
const KEY = 'site-monitor.theme';
const media = () => matchMedia('(prefers-color-scheme: dark)');

const chosen = (): Theme | undefined => {
  try {
    const v = localStorage.getItem(KEY);
    return v === 'light' || v === 'dark' ? v : undefined;
  } catch {
    return undefined;
  }
};
export const currentTheme = (): Theme => chosen() ?? (media().matches ? 'dark' : 'light');

const listeners = new Set<() => void>();
const apply = () => {
  document.documentElement.dataset.theme = currentTheme();
  listeners.forEach((l) => l());
};
apply();
media().addEventListener('change', apply);

/** The person's choice, remembered in this browser. */
export function chooseTheme(theme: Theme) {
  try {
    localStorage.setItem(KEY, theme);
  } catch {
    // Storage refused: the theme holds until the page is closed.
  }
  document.documentElement.dataset.theme = theme;
  listeners.forEach((l) => l());
}

export function useTheme(): Theme {
  const [t, setT] = useState(currentTheme);
  useEffect(() => {
    const update = () => setT(document.documentElement.dataset.theme as Theme);
    listeners.add(update);
    update();
    return () => void listeners.delete(update);
  }, []);
  return t;
}
