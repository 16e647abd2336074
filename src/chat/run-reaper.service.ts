import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { RunRegistry } from './run-registry.service.js';

/**
 * Gives up the runs whose instance died, every RUN_STALE_AFTER_MS, on every
 * instance: a run left `running` by a killed process would otherwise keep
 * its row `running` and its checkpoints until someone came back to its
 * session. Taking part on every instance is harmless: each run is given up once.
 */
@Injectable()
export class RunReaper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RunReaper.name);
  private timer?: NodeJS.Timeout;
  private sweeping = false;

  constructor(private readonly runs: RunRegistry) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.sweep(), this.runs.staleAfterMs);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  private async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      const released = await this.runs.releaseAllStale();
      if (released.length > 0) this.logger.warn({ run_ids: released }, `gave up ${released.length} run(s) whose instance stopped heartbeating`);
    } catch (error) {
      // The database not answering now: the next sweep tries again.
      this.logger.debug(`stale runs not swept: ${(error as Error).message}`);
    } finally {
      this.sweeping = false;
    }
  }
}
