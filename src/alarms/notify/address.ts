import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

// Where a webhook may go (contract 16): an address that is loopback, link-local, private (or
// otherwise not public: unspecified, shared, multicast, reserved) is refused unless it lies inside
// one of the ranges of NOTIFY_ALLOW_PRIVATE. The check is made on the addresses the name resolves
// to at delivery, and the connection goes to the address that was checked.

const PRIVATE = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  PRIVATE.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  PRIVATE.addSubnet(net, bits, 'ipv6');

/** The ranges of a NOTIFY_ALLOW_PRIVATE value ("127.0.0.0/8, ::1/128"). */
export function allowList(cidrs: string | undefined): BlockList {
  const list = new BlockList();
  for (const part of (cidrs ?? '').split(',')) {
    const [net, bits] = part.trim().split('/');
    if (!net) continue;
    const type = isIP(net) === 6 ? 'ipv6' : 'ipv4';
    list.addSubnet(net, Number(bits), type);
  }
  return list;
}

/** An IPv4 address mapped into IPv6 (::ffff:a.b.c.d) as the IPv4 address it is. */
const unmapped = (address: string) => {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return m ? m[1] : address;
};

/** Whether an address may be called: public, or inside the allowed ranges. */
export function mayCall(address: string, allowed: BlockList): boolean {
  const a = unmapped(address);
  const type = isIP(a) === 6 ? 'ipv6' : 'ipv4';
  return !PRIVATE.check(a, type) || allowed.check(a, type);
}

export class RefusedAddress extends Error {}

/** The address to connect to for a host name (or literal address), or RefusedAddress. */
export async function checkedAddress(
  host: string,
  allowed: BlockList,
): Promise<{ address: string; family: number }> {
  const bare = host.replace(/^\[|\]$/g, '');
  const found = isIP(bare)
    ? [{ address: bare, family: isIP(bare) }]
    : await lookup(bare, { all: true, verbatim: true });
  const refused = found.find((f) => !mayCall(f.address, allowed));
  if (refused || !found.length)
    throw new RefusedAddress(
      `webhook address ${refused?.address ?? host} is loopback, link-local or private`,
    );
  return found[0];
}
