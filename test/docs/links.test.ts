import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../operations/process.js';

// The repository documents itself: every link of the README and docs/ stays inside it and lands on
// a file (and heading) that exists.

const pages = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
const anchorsOf = (file: string) =>
  new Set(
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => /^#{1,6} /.test(l))
      .map((l) =>
        l
          .replace(/^#+ /, '')
          .trim()
          .toLowerCase()
          .replace(/[^\p{L}\p{N} _-]/gu, '')
          .replace(/ /g, '-'),
      ),
  );

describe('documentation links', () => {
  it.each(pages)(
    '%s links only inside the repository, to files and headings that exist',
    (page) => {
      const file = join(ROOT, page);
      const text = readFileSync(file, 'utf8');
      expect(text).not.toContain('../shared');
      const links = [...text.matchAll(/\]\(([^)\s]+)\)|<(https?:[^>]+)>/g)].map(
        (m) => m[1] ?? m[2],
      );
      for (const link of links) {
        if (/^https?:/.test(link)) {
          expect(link, `${page}: ${link}`).toMatch(/^http:\/\/localhost[:/]/);
          continue;
        }
        const [path, anchor] = link.split('#');
        const target = path ? resolve(dirname(file), path) : file;
        expect(
          relative(ROOT, target).startsWith('..'),
          `${page}: ${link} leaves the repository`,
        ).toBe(false);
        expect(existsSync(target), `${page}: ${link}`).toBe(true);
        if (anchor) expect(anchorsOf(target).has(anchor), `${page}: ${link}`).toBe(true);
      }
    },
  );
});
