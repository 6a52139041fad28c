/**
 * What engines log through: the subset of pino's logger they use, so they take the app's logger (or
 * a test's) without depending on the HTTP framework that owns it.
 */
export interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}
