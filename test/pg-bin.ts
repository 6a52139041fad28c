// Without vitest, so that bench/failover.ts can build the cluster too (test/operations/cluster.ts).
/** The PostgreSQL 15 server programs the Patroni cluster runs (Debian's postgresql-15). */
export const PG_BIN_DIR = '/usr/lib/postgresql/15/bin';
