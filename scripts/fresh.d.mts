/** The newest modification time (ms) of the files under `dir`. */
export function newest(dir: string): number;
/** Whether `marker` exists and is newer than every file under `sources` and `root`/package.json. */
export function isFresh(root: string, marker: string, sources: string[]): boolean;
