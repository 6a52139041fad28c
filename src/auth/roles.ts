// Roles (contract 16): what a client may do, beside the sites and cameras it may reach. Every /v1
// route names the one right it needs (route `config.right`, checked in plugins/auth.ts before the
// body is read); this table says which roles hold each right. A route that names none is refused to
// every role.

export const ROLES = ['full', 'viewer', 'operator', 'edge'] as const;
export type Role = (typeof ROLES)[number];

/** The role of a client made without one: everything its sites and cameras allow (the rights before roles existed). */
export const DEFAULT_ROLE: Role = 'full';

export const ROLE_TEXT: Record<Role, string> = {
  full: 'everything its sites and cameras allow (the default)',
  viewer:
    'reads only: sites, configuration, downloads, historian, stream, alarm lists, journal, KPIs, rules, transactions, images',
  operator: 'a viewer that may also acknowledge, shelve, unshelve and resolve alarms',
  edge: 'uploads, alarm send, resolve and the active list, configuration reads',
};

/** Each right and the roles that hold it. */
export const RIGHTS = {
  /** Sites, downloads, historian, the stream, alarm list / journal / KPIs / rules, transactions, images. */
  read: ['full', 'viewer', 'operator'],
  /** Equipment configuration (what a gateway reads to know its registers). */
  'read-config': ['full', 'viewer', 'operator', 'edge'],
  /** The active-alarm list. */
  'active-alarms': ['full', 'viewer', 'operator', 'edge'],
  /** Log and reading uploads, alarm sends. */
  upload: ['full', 'edge'],
  /** Resolving alarms. */
  resolve: ['full', 'operator', 'edge'],
  /** Acknowledging, shelving and unshelving alarms. */
  operate: ['full', 'operator'],
  /** The administration routes (which also need `admin: true`). */
  administer: ['full'],
  /** The client's own record (GET /v1/me). */
  self: ['full', 'viewer', 'operator', 'edge'],
} as const satisfies Record<string, readonly Role[]>;

export type Right = keyof typeof RIGHTS;

export const isRole = (v: unknown): v is Role => (ROLES as readonly unknown[]).includes(v);
export const isRight = (v: unknown): v is Right =>
  typeof v === 'string' && Object.prototype.hasOwnProperty.call(RIGHTS, v);

/** Whether a role holds a right. */
export function roleHas(role: Role, right: Right): boolean {
  return (RIGHTS[right] as readonly Role[]).includes(role);
}
