import { Injectable, Module } from '@nestjs/common';

/**
 * Whether this instance is draining for shutdown (SIGTERM): it takes no new
 * chat turns and lets the turns in flight finish. The chat module starts the
 * drain; health reports it.
 */
@Injectable()
export class DrainState {
  private since: Date | null = null;

  get draining(): boolean {
    return this.since !== null;
  }

  /** Starts the drain (idempotent). */
  begin(): void {
    this.since ??= new Date();
  }
}

/** One DrainState per app, shared by the modules that import it (chat, health). */
@Module({ providers: [DrainState], exports: [DrainState] })
export class DrainStateModule {}
