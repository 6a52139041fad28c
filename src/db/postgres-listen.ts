import pg from 'pg';

/**
 * LISTEN on a connection of its own (a pooled one would be handed to others). A lost connection is
 * made again every second until it works; onNotify runs after each connection, since notices sent
 * meanwhile are lost.
 */
export async function listen(
  connection: pg.ClientConfig,
  channel: string,
  onNotify: (payload: string) => void,
): Promise<() => Promise<void>> {
  let client: pg.Client | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const connect = async () => {
    const c = new pg.Client(connection);
    let lost = false;
    const again = () => {
      if (lost) return;
      lost = true;
      c.end().catch(() => {});
      if (client === c) client = undefined;
      if (!stopped) timer = setTimeout(() => void connect().catch(() => {}), 1000).unref();
    };
    c.on('error', again);
    c.on('end', again);
    c.on('notification', (m) => m.channel === channel && onNotify(m.payload ?? ''));
    try {
      await c.connect();
      await c.query(`LISTEN "${channel.replace(/"/g, '""')}"`);
    } catch (err) {
      again();
      throw err;
    }
    if (stopped) return void (await c.end().catch(() => {}));
    client = c;
    onNotify('');
  };
  try {
    await connect();
  } catch (err) {
    stopped = true;
    clearTimeout(timer);
    throw err;
  }
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await client?.end().catch(() => {});
  };
}
