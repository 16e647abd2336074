import { execFileSync } from 'node:child_process';

/**
 * A network namespace of the test's own (`ip netns`, as root): its loopback
 * has nothing listening, so a service started in it finds no PostgreSQL and
 * no Redis on their default ports. A veth pair joins it to this namespace:
 * the service listens on `address`, this process reaches it there.
 */
export interface NetworkNamespace {
  name: string;
  /** The namespace's end of the veth pair. */
  address: string;
  remove(): void;
}

/** Whether this process may create network namespaces (root with iproute2), with the reason when it may not. */
export function namespaceSupport(): { ok: true } | { ok: false; reason: string } {
  if (process.getuid?.() !== 0) return { ok: false, reason: 'not running as root' };
  try {
    execFileSync('ip', ['-V'], { stdio: 'ignore' });
    return { ok: true };
  } catch {
    return { ok: false, reason: 'iproute2 (ip) is not installed' };
  }
}

export function createNetworkNamespace(): NetworkNamespace {
  // Names and addresses from the pid: test files running side by side do not collide.
  const tag = process.pid % 16_000;
  const name = `rag-e2e-${process.pid}`;
  const outside = `rgo${tag}`;
  const inside = `rgi${tag}`;
  const subnet = `10.${200 + Math.floor(tag / 4000)}.${Math.floor((tag % 4000) / 64)}.${(tag % 64) * 4}`;
  const [a, b, c, d] = subnet.split('.').map(Number);
  const hostAddress = `${a}.${b}.${c}.${d + 1}`;
  const address = `${a}.${b}.${c}.${d + 2}`;
  const ip = (...args: string[]) => execFileSync('ip', args, { stdio: 'pipe' });
  const remove = () => {
    try {
      ip('netns', 'del', name); // takes its end of the pair, and so the pair, with it
    } catch {
      // already gone
    }
    try {
      ip('link', 'del', outside); // left behind when a setup failed before moving its peer
    } catch {
      // gone with the namespace
    }
  };
  remove();
  try {
    ip('netns', 'add', name);
    ip('link', 'add', outside, 'type', 'veth', 'peer', 'name', inside);
    ip('link', 'set', inside, 'netns', name);
    ip('addr', 'add', `${hostAddress}/30`, 'dev', outside);
    ip('link', 'set', outside, 'up');
    ip('netns', 'exec', name, 'ip', 'addr', 'add', `${address}/30`, 'dev', inside);
    ip('netns', 'exec', name, 'ip', 'link', 'set', inside, 'up');
    ip('netns', 'exec', name, 'ip', 'link', 'set', 'lo', 'up');
  } catch (error) {
    remove();
    throw error;
  }
  return { name, address, remove };
}
