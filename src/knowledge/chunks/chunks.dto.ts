import { ApiProperty } from '@nestjs/swagger';
import { IsString, MaxLength } from 'class-validator';
import { ChunkLocation } from '../../trace/trace.protocol.js';

export class ChunkIdParams {
  @ApiProperty({ description: 'A chunk id, as `chunk_id` of a retrieved chunk (a trace, a citation, a search result)', maxLength: 40 })
  @IsString()
  @MaxLength(40)
  chunk_id: string;
}

export class ChunkPassage {
  @ApiProperty() chunk_id: string;
  @ApiProperty() text: string;
  @ApiProperty({ type: 'integer', nullable: true, description: 'Page of a PDF; null for other documents' }) page: number | null;
  @ApiProperty({ type: ChunkLocation, nullable: true, description: 'Sheet and row, or heading path; null when there is nothing more than the page' })
  location: ChunkLocation | null;
}

export class ChunkDocument {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() filename: string;
}

export class ChunkSourceResponse extends ChunkPassage {
  @ApiProperty({ format: 'uuid', description: "The chunk's knowledge collection" }) collection_id: string;
  @ApiProperty({ type: ChunkDocument }) document: ChunkDocument;
  @ApiProperty({ type: [ChunkPassage], description: 'The chunks just before it in its document (same level), in document order' })
  before: ChunkPassage[];
  @ApiProperty({ type: [ChunkPassage], description: 'The chunks just after it in its document (same level), in document order' })
  after: ChunkPassage[];
}
