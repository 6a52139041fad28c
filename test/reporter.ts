import type { RunnerTask, RunnerTestFile } from 'vitest';
import { DefaultReporter } from 'vitest/reporters';
import type { SuiteNotes } from './needs.js';

// Vitest's default reporter, and before its totals a summary of what this run did not cover: the
// databases the database suites ran on, the tests that were skipped and why, and the commands that
// run them. Everything is counted from the run's tasks: a suite that cannot run here is skipped
// with its reason noted on it (describeWith / describeEachBackend in test/needs.ts and
// test/helper.ts); a test skipped with a note (context.skip(note)) gives that note. Vitest's own
// totals stay the last lines, and the summary holds a plain "N passed, N failed" line.

const DATABASES = { pglite: 'embedded PGlite', postgres: 'PostgreSQL' } as const;

interface Leaf {
  state: 'passed' | 'failed' | 'skipped';
  /** The suites from the file down, innermost last. */
  path: RunnerTask[];
  task: RunnerTask;
}

function leaves(task: RunnerTask, path: RunnerTask[] = [], out: Leaf[] = []): Leaf[] {
  if (task.type === 'suite') {
    for (const child of task.tasks) leaves(child, [...path, task], out);
    return out;
  }
  const result = task.result?.state;
  const state = result === 'pass' ? 'passed' : result === 'fail' ? 'failed' : ('skipped' as const);
  out.push({ state, path, task });
  return out;
}

const notesOf = (task: RunnerTask) => task.meta as SuiteNotes;

/** The innermost suite of the test that notes `key`. */
const noted = <K extends keyof SuiteNotes>(leaf: Leaf, key: K) =>
  [...leaf.path].reverse().find((s) => notesOf(s)[key] !== undefined);

/** Why a test did not run, and the command that runs it when there is one. */
function whySkipped(leaf: Leaf): { reason: string; howToRun?: string; suite?: RunnerTask } {
  const suite = noted(leaf, 'skipped');
  if (suite) return { ...notesOf(suite).skipped!, suite };
  // context.skip(note) keeps the note on the result (not in the result's declared type).
  const note = (leaf.task.result as { note?: string } | undefined)?.note;
  if (note) return { reason: note };
  if (leaf.path.some((s) => s.result?.errors?.length))
    return { reason: 'not run: a hook of its suite failed (see the errors above)' };
  if (leaf.task.mode === 'skip' || leaf.task.mode === 'todo')
    return { reason: 'skipped without a noted reason (it.skip, .only or a -t filter)' };
  return { reason: 'not run (the run was stopped)' };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The summary's lines (exported for a check of the reporter itself). */
export function summarize(files: RunnerTestFile[]): string[] {
  const all = files.flatMap((f) => leaves(f));
  const count = (state: Leaf['state']) => all.filter((l) => l.state === state).length;
  const lines: string[] = [];

  // Databases: those with a test that ran, and those whose suites were all skipped.
  const ran = new Map<string, number>();
  const notRun = new Set<string>();
  for (const leaf of all) {
    const suite = noted(leaf, 'database');
    if (!suite) continue;
    const name = DATABASES[notesOf(suite).database!];
    if (leaf.state === 'skipped') notRun.add(name);
    else ran.set(name, (ran.get(name) ?? 0) + 1);
  }
  for (const name of ran.keys()) notRun.delete(name);
  if (ran.size || notRun.size)
    lines.push(
      `Databases: ran on ${
        ran.size ? [...ran].map(([n, c]) => `${n} (${plural(c, 'test')})`).join(', ') : 'none'
      }${notRun.size ? `; not on ${[...notRun].join(', ')}` : ''}`,
    );

  // Skipped tests by reason; within a reason, the suites by name, the per-backend twins together.
  const skipped = all.filter((l) => l.state === 'skipped');
  const byReason = new Map<string, { howToRun?: string; leaves: Leaf[] }>();
  for (const leaf of skipped) {
    const why = whySkipped(leaf);
    const entry = byReason.get(why.reason) ?? { howToRun: why.howToRun, leaves: [] };
    entry.leaves.push(leaf);
    byReason.set(why.reason, entry);
  }
  if (skipped.length) lines.push(`Skipped: ${plural(skipped.length, 'test')}`);
  for (const [reason, { leaves: ls }] of byReason) {
    lines.push(`  ${plural(ls.length, 'test')}: ${reason}`);
    const suites = new Map<RunnerTask | undefined, number>();
    for (const l of ls) {
      const s = noted(l, 'skipped');
      suites.set(s, (suites.get(s) ?? 0) + 1);
    }
    const twins = [...suites].filter(([s]) => s && notesOf(s).eachBackend);
    const others = [...suites].filter(([s]) => s && !notesOf(s).eachBackend);
    if (twins.length) {
      const backend = DATABASES[notesOf(twins[0][0]!).database!];
      const n = twins.reduce((sum, [, c]) => sum + c, 0);
      const [first] = twins;
      lines.push(
        `    ${plural(n, 'test')} in the ${backend} runs of ${plural(twins.length, 'database suite')} (e.g. "${first[0]!.name}")`,
      );
    }
    for (const [s, n] of others) lines.push(`    ${plural(n, 'test')} in "${s!.name}"`);
    const loose = suites.get(undefined);
    if (loose) {
      const names = ls.filter((l) => !noted(l, 'skipped')).map((l) => l.task.name);
      lines.push(`    ${names.slice(0, 3).join('; ')}${names.length > 3 ? '; …' : ''}`);
    }
  }
  const commands = [
    ...new Set([...byReason.values()].map((e) => e.howToRun).filter((c) => c !== undefined)),
  ];
  if (commands.length) {
    lines.push(`To run them: ${commands[0]}`);
    for (const c of commands.slice(1)) lines.push(`         and: ${c}`);
    if (commands.some((c) => c.includes('test:pg')))
      lines.push(
        '  (npm run test:pg uses TEST_DATABASE_URL, by default postgres://postgres@127.0.0.1:5432/test)',
      );
  }
  // The console's browser tests have a run of their own (a built console and Debian's Chromium).
  lines.push(
    'Not in this run: the console in a browser (test-browser/): npm run test:browser (needs /usr/bin/chromium)',
  );
  lines.push(
    `${count('passed')} passed, ${count('failed')} failed${skipped.length ? `, ${skipped.length} skipped` : ''}`,
  );
  return lines;
}

export default class SummaryReporter extends DefaultReporter {
  override reportTestSummary(files: RunnerTestFile[], errors: unknown[]): void {
    this.log();
    for (const line of summarize(files)) this.log(` ${line}`);
    super.reportTestSummary(files, errors);
  }
}
