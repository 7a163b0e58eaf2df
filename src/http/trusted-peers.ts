import { BlockList, isIP } from 'node:net';

/**
 * gunicorn's forwarded_allow_ips check, widened to CIDRs: `*` trusts every peer, otherwise the
 * peer's address (an IPv4-mapped IPv6 address read as IPv4) must be listed or inside a listed block.
 */
export function trustedPeers(entries: readonly string[]): (address: string | undefined) => boolean {
  if (entries.includes('*')) return () => true;
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', prefix] = entry.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(prefix), family);
  }
  // Peers are few and BlockList.check allocates: remember each answer (bounded, then forgotten).
  const known = new Map<string, boolean>();
  return (address) => {
    if (address === undefined) return false;
    const remembered = known.get(address);
    if (remembered !== undefined) return remembered;
    if (known.size >= 4096) known.clear();
    const trusted = check(address);
    known.set(address, trusted);
    return trusted;
  };

  function check(address: string): boolean {
    const plain = address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
    const family = isIP(plain);
    return family !== 0 && list.check(plain, family === 6 ? 'ipv6' : 'ipv4');
  }
}
