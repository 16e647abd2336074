import { Injectable, Module } from '@nestjs/common';

/** One part's state for GET /health/ready: `up` once it serves at normal speed. */
export type ReadinessState = { status: 'up' | 'down'; [detail: string]: unknown };

/**
 * What an instance still needs before it serves at normal speed (an index
 * loading in the background after start-up): each part that has such a step
 * registers a probe here, and GET /health/ready reports them all.
 */
@Injectable()
export class Readiness {
  private readonly probes = new Map<string, () => ReadinessState>();

  register(name: string, probe: () => ReadinessState): void {
    this.probes.set(name, probe);
  }

  report(): Record<string, ReadinessState> {
    return Object.fromEntries([...this.probes].map(([name, probe]) => [name, probe()]));
  }
}

/** One Readiness per application: the modules that register and the health module import this. */
@Module({ providers: [Readiness], exports: [Readiness] })
export class ReadinessModule {}
