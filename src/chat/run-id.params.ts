import { ApiProperty } from '@nestjs/swagger';
import { IsUUID } from 'class-validator';
import { LowercaseId } from '../common/lowercase-id.js';

export class RunIdParams {
  @ApiProperty({ format: 'uuid' })
  @LowercaseId()
  @IsUUID()
  run_id: string;
}
