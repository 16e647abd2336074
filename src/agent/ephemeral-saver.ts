import type { RunnableConfig } from '@langchain/core/runnables';
import { Checkpoint, CheckpointMetadata, MemorySaver } from '@langchain/langgraph';

type PendingWrites = Parameters<MemorySaver['putWrites']>[1];

/**
 * The checkpoints of stateless turns (nothing of theirs is stored): in
 * memory, kept only between `begin` and `end` of a thread. A write that
 * lands after the turn ended — a step an abort did not stop in time — is
 * dropped, so an ended turn leaves nothing behind.
 */
export class EphemeralSaver extends MemorySaver {
  private readonly open = new Set<string>();

  begin(threadId: string): void {
    this.open.add(threadId);
  }

  async end(threadId: string): Promise<void> {
    this.open.delete(threadId);
    await this.deleteThread(threadId);
  }

  /** How many threads hold checkpoints (for tests: none once every turn ended). */
  get storedThreads(): number {
    return new Set([...Object.keys(this.storage), ...Object.keys(this.writes).map((key) => JSON.parse(key)[0] as string)]).size;
  }

  override async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata): Promise<RunnableConfig> {
    if (!this.isOpen(config)) return config;
    return super.put(config, checkpoint, metadata);
  }

  override async putWrites(config: RunnableConfig, writes: PendingWrites, taskId: string, taskPath?: string): Promise<void> {
    if (!this.isOpen(config)) return;
    return super.putWrites(config, writes, taskId, taskPath);
  }

  private isOpen(config: RunnableConfig): boolean {
    return this.open.has(String(config.configurable?.thread_id));
  }
}
