import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { BlockList } from 'node:net';
import { checkedAddress, RefusedAddress } from './address.js';
import type { Attempt } from './types.js';

// A webhook delivery (contract 16): POST of the JSON body, signed with HMAC-SHA256 over
// "<timestamp>.<body>" with the channel's secret. A 2xx delivers; a timeout (10 s), a connection
// error, 408, 429 or 5xx is retried; any other status fails at once. The secret and the URL's
// user part never appear in what this returns (it ends up in logs and the journal).

export const WEBHOOK_TIMEOUT_MS = 10_000;

/** The signature header's value for a body sent at `timestamp` (Unix seconds). */
export const signature = (secret: string, timestamp: number, body: string) =>
  'sha256=' + createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');

export async function postWebhook(
  url: string,
  secret: string | null,
  deliveryId: string,
  body: string,
  allowed: BlockList,
  timeoutMs = WEBHOOK_TIMEOUT_MS,
): Promise<Attempt> {
  const target = new URL(url);
  let address: { address: string; family: number };
  try {
    address = await checkedAddress(target.hostname, allowed);
  } catch (err) {
    if (err instanceof RefusedAddress) return { result: 'failed', reason: err.message };
    return { result: 'retry', reason: `cannot resolve ${target.hostname}` };
  }
  const timestamp = Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    'user-agent': 'site-monitor',
    'x-site-monitor-delivery': deliveryId,
    'x-site-monitor-timestamp': String(timestamp),
  };
  if (secret) headers['x-site-monitor-signature'] = signature(secret, timestamp, body);
  const client = target.protocol === 'https:' ? https : http;
  return new Promise<Attempt>((resolve) => {
    const req = client.request(
      target,
      {
        method: 'POST',
        headers,
        timeout: timeoutMs,
        // Connect to the address that was checked (no second lookup that could answer otherwise).
        lookup: (_host, opts, cb) => {
          if ((opts as { all?: boolean }).all)
            (cb as (e: null, a: { address: string; family: number }[]) => void)(null, [address]);
          else cb(null, address.address, address.family);
        },
      },
      (res) => {
        res.resume();
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) resolve({ result: 'delivered' });
        else if (status === 408 || status === 429 || status >= 500)
          resolve({ result: 'retry', reason: `HTTP ${status}` });
        else resolve({ result: 'failed', reason: `HTTP ${status}` });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err) =>
      resolve({
        result: 'retry',
        reason: err.message === 'timeout' ? 'no answer within 10 s' : 'connection failed',
      }),
    );
    req.end(body);
  });
}
