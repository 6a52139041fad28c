import type { Database, Queryable } from '../../db/index.js';
import { EQUIPMENT, type TelemetryKind } from '../../equipment.js';
import type { Logger } from '../../logger.js';
import { QueueVacuum } from '../../db/vacuum.js';
import { PeriodicTask } from '../../periodic-task.js';
import { advance, covers, decode, encode, fromSnapshot } from '../../stream/cursor.js';
import { readEvents } from '../../stream/events.js';
import { messageOf } from './definition.js';
import { evaluateClock, evaluateSamples, type Transition } from './evaluate.js';
import { endCommunicationLoss } from './comm-loss.js';
import { keyOf } from '../record.js';
import { raiseAlarms, resolveOwnAlarmsBy } from './raise.js';
import { loadRulesToEvaluate, openAlarms, saveStates, type RuleWithState } from './repository.js';
import type { Job } from '../../telemetry/jobs.js';
import { RecentLogs } from './recent.js';
import { collect, gatherSamples, type Work } from './samples.js';
import {
  applyUnsaved,
  FLUSH_UNSAVED,
  formatUnsaved,
  MAX_UNSAVED,
  outcomeOf,
  parseUnsaved,
  type UnsavedMap,
} from './unsaved.js';

// Evaluates the limit rules on what was stored. It follows stream_events (written by the very
// statement that stores each upload, HTTP or MQTT, so an event exists exactly when its data is
// committed) from a position kept in the database: each pass, in one transaction, reads the events
// after that position, evaluates the rules of the equipment they name on the samples stored (logs
// that this instance has just stored from memory, recent.ts, other logs read back from the log
// tables, readings from their events), applies the transitions (alarms raised and resolved through
// the alarm store, all of a pass in a few statements), saves the rules' states and moves the
// position (a rule's row only when more than its newest sample changed: unsaved.ts). A crash before
// the commit leaves position and state as they were: the next pass, on any instance, does the same
// work again; after it, nothing is done twice. The position's row lock lets one pass run
// at a time across instances (another instance skips, and its next kick or poll comes soon).
// A pass runs after each local commit (kick), at least every pollMs (events of other instances,
// delays ended by the clock), never two at once and no sooner than minGapMs after the last began.

export interface RuleEvaluatorOptions {
  log: Logger;
  /** After a pass that changed alarms committed (the live stream looks for their events). */
  onChange?: () => void;
  pollMs?: number;
  minGapMs?: number;
  /** Events per pass (per transaction). */
  batch?: number;
  /** The entries of this instance's latest uploads (the samples of their events, not read back). */
  recent?: RecentLogs;
}

const POLL_MS = 1000;
/**
 * Rule states written after which the evaluator vacuums alarm_rules (db/vacuum.ts): 500 rules
 * evaluated 10 times a second leave 5,000 dead rows a second, which every later pass walks over
 * where autovacuum does not run.
 */
const VACUUM_AFTER_STATES = 20_000;
/**
 * Newest samples written to alarm_rule_cursor.unsaved (each pass rewrites the list, compressed out
 * of line past about 2 kB) after which the evaluator vacuums that table.
 */
const VACUUM_AFTER_UNSAVED = 50_000;
const MIN_GAP_MS = 100;

const BATCH = 5000;
export class RuleEvaluator {
  private poll: PeriodicTask | undefined;
  private running = false;
  private again = false;
  private current: Promise<void> = Promise.resolve();
  private lastPass = 0;

  private waiting: (() => void)[] = [];
  private closed = false;
  /** Events per pass: halved after a failed pass (one too big for its deadline), doubled back after each success. */
  private batch: number;
  private readonly recent = new RecentLogs();
  private readonly vacuum: QueueVacuum;
  private readonly vacuumCursor: QueueVacuum;
  /** The last pass found no rule to evaluate: uploads need not be kept for it. */
  private idle = false;

  constructor(
    private readonly db: Database,
    private readonly opts: RuleEvaluatorOptions,
  ) {
    this.batch = opts.batch ?? BATCH;
    this.vacuum = new QueueVacuum(db, 'alarm_rules', VACUUM_AFTER_STATES);
    this.vacuumCursor = new QueueVacuum(db, 'alarm_rule_cursor', VACUUM_AFTER_UNSAVED);
  }

  start(): void {
    this.poll = new PeriodicTask(() => this.kick(), {
      intervalMs: this.opts.pollMs ?? POLL_MS,
      firstDelayMs: 0,
      onError: (err) => this.opts.log.warn({ err }, 'alarm rules: evaluation failed'),
    }).start();
  }

  /**
   * Uploads this instance committed (before their kick) in transaction `xid`: their entries are kept
   * for the passes (not when the transaction is not known: its events' samples are read back).
   */
  stored(jobs: Job[], xid: string | undefined): void {
    if (!this.idle && !this.closed && xid !== undefined) this.recent.add(jobs, xid);
  }

  /** Something was committed: evaluate (soon). */
  kick(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    this.current = this.loop();
  }

  /**
   * Resolves once a pass of this instance that began after this call has read to the end (tests:
   * what was committed before is evaluated). A pass that found the position taken (another
   * instance's pass, which may have begun before what was committed) does not count: the next does.
   */
  async settle(): Promise<void> {
    const done = new Promise<void>((resolve) => this.waiting.push(resolve));
    this.kick();
    if (this.closed) this.waiting.splice(0).forEach((w) => w());
    return done;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.poll?.stop();
    await this.current;
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      const wait = this.lastPass + (this.opts.minGapMs ?? MIN_GAP_MS) - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      this.lastPass = performance.now();
      const waiting = this.waiting.splice(0);
      // Whether a pass held the position and read to the end (or failed): then the waiting are done.
      let done = true;
      try {
        for (;;) {
          const began = performance.now();
          const { more, changed, busy, idle, saved, unsaved } = await evaluatePass(this.db, {
            log: this.opts.log,
            batch: this.batch,
            recent: this.recent,
          });
          if (!busy) this.idle = idle === true;
          if (!busy && !more) this.recent.readPast(began);
          if (saved)
            await this.vacuum
              .note(saved)
              .catch((err: unknown) =>
                this.opts.log.warn({ err }, 'alarm rules: could not vacuum alarm_rules'),
              );
          if (unsaved)
            await this.vacuumCursor
              .note(unsaved)
              .catch((err: unknown) =>
                this.opts.log.warn({ err }, 'alarm rules: could not vacuum alarm_rule_cursor'),
              );
          this.batch = Math.min(this.opts.batch ?? BATCH, this.batch * 2);
          if (changed) this.opts.onChange?.();
          if (busy) {
            // Another instance is at it: look again after the gap (the waiting wait for that pass).
            this.again = true;
            done = false;
          }
          if (!more || this.closed) break;
        }
      } catch (err) {
        this.batch = Math.max(1, Math.floor(this.batch / 2));
        this.opts.log.warn(
          { err, batch: this.batch },
          'alarm rules: evaluation failed; the next pass retries with fewer events',
        );
      }
      if (done) waiting.forEach((wake) => wake());
      else this.waiting.unshift(...waiting);
    } while (this.again && !this.closed);
    this.running = false;
    this.waiting.splice(0).forEach((wake) => wake());
  }
}

/**
 * One pass (one transaction): the events after the stored position, at most `batch`. `more`: the
 * batch was full; `busy`: another pass holds the position; `changed`: alarms were raised or resolved;
 * `saved`: rule rows written; `unsaved`: newest samples written with the position.
 * `clock`: the time samples are evaluated at (default: when the events have been read).
 */
export async function evaluatePass(
  db: Database,
  opts: Pick<RuleEvaluatorOptions, 'log' | 'batch' | 'recent'>,
  clock?: number,
): Promise<{
  more: boolean;
  changed: boolean;
  busy: boolean;
  idle?: boolean;
  saved?: number;
  unsaved?: number;
}> {
  const batch = opts.batch ?? BATCH;
  return db.transaction(async (tx) => {
    // The position, and whether there is anything to evaluate: no rule and no communication loss
    // to end (then the events need not be read, only passed, when there are any, so that an idle
    // service writes nothing).
    const held = await tx.query<{ position: string | null; unsaved: string; idle: boolean }>(
      `SELECT position, unsaved,
              NOT EXISTS (SELECT 1 FROM alarm_rules WHERE enabled)
                AND NOT EXISTS (SELECT 1 FROM site_alarms WHERE resolved_at IS NULL AND source = 'communication') AS idle
         FROM alarm_rule_cursor FOR UPDATE SKIP LOCKED`,
    );
    if (!held.length) return { more: false, changed: false, busy: true };
    const position = held[0].position;
    const from = position === null ? undefined : decode(position);
    if (!from) {
      // The first pass ever: from what is committed now (no rule can have existed before).
      const [{ snap }] = await tx.query<{ snap: string }>(
        'SELECT pg_current_snapshot()::text AS snap',
      );
      await savePosition(tx, encode(fromSnapshot(snap)));
      return { more: false, changed: false, busy: false };
    }
    if (held[0].idle) {
      const probe = await readEvents(tx, from, 1);
      if (probe.rows.length) await savePosition(tx, encode(probe.snapshot));
      return { more: false, changed: false, busy: false, idle: true };
    }
    const page = await readEvents(tx, from, batch);
    // The service's time once the events are read (not when the pass began: a sample stamped just
    // before its upload committed, read by a pass that began meanwhile, is not ahead of the clock).
    const now = clock ?? Date.now();
    if (page.pruned && !covers(from, page.pruned))
      opts.log.warn(
        { pruned: encode(page.pruned) },
        'alarm rules: evaluation fell behind the stream retention (STREAM_RETENTION_MS); samples stored meanwhile were not evaluated',
      );
    const complete = page.rows.length < batch;
    const to = advance(from, page.snapshot, page.rows, complete, () => {});
    const work = collect(page.rows);
    const unsaved = parseUnsaved(held[0].unsaved);
    const { changed, saved, unsavedChanged } = await evaluateRules(tx, work, now, opts.recent, {
      unsaved,
    });
    const ended = await endCommunicationLoss(tx, work.sites);
    // Without events the position only moved past transactions that stored none: not worth a write
    // (unless newest samples changed: a pass the clock alone made write a rule's row).
    const write = page.rows.length > 0 || unsavedChanged;
    if (write) await savePosition(tx, encode(to), unsaved);
    return {
      more: !complete,
      changed: changed + ended > 0,
      busy: false,
      saved,
      unsaved: write ? unsaved.size : 0,
    };
  });
}

const savePosition = (tx: Queryable, position: string, unsaved?: UnsavedMap) =>
  unsaved
    ? tx.query(`UPDATE alarm_rule_cursor SET position = $1, unsaved = $2`, [
        position,
        formatUnsaved(unsaved),
      ])
    : tx.query(`UPDATE alarm_rule_cursor SET position = $1`, [position]);

/**
 * Evaluates the rules of the given equipment on their logs stored in [from, to] (epoch ms), as a pass
 * would for an upload of them: for history loaded around the upload path (the demo's), which makes no
 * stream events. It holds the position's row (passes wait) and writes the rows of the rules it
 * evaluates and of every rule with an unsaved newest sample. Returns the alarms changed.
 */
export async function evaluateStoredLogs(
  tx: Queryable,
  equipment: { kind: TelemetryKind; id: number }[],
  range: { from: number; to: number },
  now = Date.now(),
): Promise<number> {
  const work: Work = { equipment: new Map(), sites: new Set() };
  for (const e of equipment)
    work.equipment.set(`${e.kind}:${e.id}`, {
      ...e,
      stored: [{ logs: [range.from, range.to] }],
    });
  const [held] = await tx.query<{ unsaved: string }>(
    'SELECT unsaved FROM alarm_rule_cursor FOR UPDATE',
  );
  const unsaved = parseUnsaved(held.unsaved);
  const { changed, unsavedChanged } = await evaluateRules(tx, work, now, undefined, {
    unsaved,
    flush: true,
  });
  if (unsavedChanged)
    await tx.query('UPDATE alarm_rule_cursor SET unsaved = $1', [formatUnsaved(unsaved)]);
  return changed;
}

/**
 * Evaluates the rules of the equipment in `work`, and those whose delay the clock ended; returns the
 * alarms changed and the rule rows saved. `unsaved` (the position's newest samples, changed in place;
 * unsavedChanged says whether it may have been): a rule whose newest sample alone changed is noted
 * there rather than its row written. With `flush` (or past FLUSH_UNSAVED entries) the rules of all
 * its entries are taken too, and every rule changed has its row written: the list ends empty.
 */
async function evaluateRules(
  tx: Queryable,
  work: Work,
  now: number,
  recent: RecentLogs | undefined,
  { unsaved, flush: flushAll = false }: { unsaved: UnsavedMap; flush?: boolean },
): Promise<{ changed: number; saved: number; unsavedChanged: boolean }> {
  const flush = flushAll || unsaved.size >= FLUSH_UNSAVED;
  const rules = await loadRulesToEvaluate(
    tx,
    [...work.equipment.values()].map((e) => ({ kind: e.kind, id: e.id })),
    now,
    flush ? [...unsaved.keys()] : [],
  );
  const before = unsaved.size;
  for (const r of rules) applyUnsaved(r, unsaved);
  // Flushing: the entries of rules not loaded (disabled or deleted since) go too.
  if (flush) unsaved.clear();
  if (!rules.length) return { changed: 0, saved: 0, unsavedChanged: unsaved.size !== before };
  const samples = await gatherSamples(tx, rules, work, now, recent);
  const open = await openAlarms(
    tx,
    rules.filter((r) => r.state.raised && r.alarmId).map((r) => r.alarmId!),
  );
  // Every rule evaluated in memory first; its transitions (in sample order) join the lane of its
  // alarm key (rules of one key in id order), and are applied below, a few statements per round.
  const lanes = new Map<string, Lane>();
  const evaluated: { r: RuleWithState; transitions: number }[] = [];
  for (const [i, r] of rules.entries()) {
    let alarmOpen = r.alarmId !== null && open.has(r.alarmId);
    const steps: Lane['steps'] = [];
    const note = (t: Transition) => {
      if (!t) return;
      steps.push({ r, t });
      alarmOpen = t.type === 'raise';
    };
    if (samples[i].length)
      r.state = evaluateSamples(r.rule, r.state, samples[i], now, alarmOpen, note);
    const byClock = evaluateClock(r.rule, r.state, now);
    if (byClock) {
      r.state = byClock.state;
      note(byClock.transition);
    }
    if (steps.length) {
      const { typeId } = EQUIPMENT[r.rule.kind];
      const key = `${r.rule.siteId}|${keyOf(typeId, r.rule.equipmentId, r.rule.alarmType)}`;
      const lane = lanes.get(key);
      if (lane) lane.steps.push(...steps);
      else lanes.set(key, { steps });
    }
    evaluated.push({ r, transitions: steps.length });
  }
  const changed = await applyTransitions(tx, [...lanes.values()]);
  // Rows to write, and newest samples to note (as rows too when there would be too many).
  const rows: RuleWithState[] = [];
  const notes: RuleWithState[] = [];
  for (const { r, transitions } of evaluated) {
    const outcome = outcomeOf(r, transitions);
    if (outcome === 'row' || (outcome === 'unsaved' && flush)) rows.push(r);
    else if (outcome === 'unsaved') notes.push(r);
  }
  if (unsaved.size + notes.length > MAX_UNSAVED) rows.push(...notes.splice(0));
  for (const r of notes)
    unsaved.set(r.rule.id, {
      base: r.saved.state.lastTs!,
      ts: r.state.lastTs!,
      value: r.state.lastValue,
    });
  await saveStates(
    tx,
    rows.sort((a, b) => a.rule.id - b.rule.id),
  );
  // Whether the list may differ (a rule's entry taken and put back counts: not worth comparing).
  return { changed, saved: rows.length, unsavedChanged: true };
}

/** The transitions of one alarm key (site and key), in the order they are to be applied. */
interface Lane {
  steps: { r: RuleWithState; t: NonNullable<Transition> }[];
}

/**
 * Applies the lanes' transitions in rounds: round k takes the k-th transition of every lane (so each
 * key's stay in order), in one statement for its raises and two for its resolves, whatever the
 * sites. Returns the alarms changed.
 */
async function applyTransitions(tx: Queryable, lanes: Lane[]): Promise<number> {
  let changed = 0;
  const keyOfRule = (r: RuleWithState) => ({
    siteId: r.rule.siteId,
    typeId: EQUIPMENT[r.rule.kind].typeId,
    equipmentId: r.rule.equipmentId,
    alarmType: r.rule.alarmType,
    by: `rule:${r.rule.id}`,
  });
  for (let k = 0; ; k++) {
    const steps = lanes.flatMap((lane) => (lane.steps[k] ? [lane.steps[k]] : []));
    if (!steps.length) return changed;
    const raises = steps.filter((s) => s.t.type === 'raise');
    const stored = await raiseAlarms(
      tx,
      raises.map(({ r, t }) => {
        const value = (t as { value: number }).value;
        return {
          ...keyOfRule(r),
          severity: r.rule.severity,
          message: messageOf(r.rule, value),
          value,
          at: t.at,
        };
      }),
      'rule',
    );
    for (const { r } of raises) {
      const key = keyOf(EQUIPMENT[r.rule.kind].typeId, r.rule.equipmentId, r.rule.alarmType);
      r.alarmId = stored.get(`${r.rule.siteId}|${key}`)!.record.SiteAlarmLogID;
      changed++;
    }
    const clears = steps.filter((s) => s.t.type === 'clear');
    changed += (
      await resolveOwnAlarmsBy(
        tx,
        clears.map(({ r }) => keyOfRule(r)),
        'rule',
      )
    ).length;
    for (const { r } of clears) r.alarmId = null;
  }
}
