import { ApiProperty } from '@nestjs/swagger';
import { IsUUID } from 'class-validator';

export class RunIdParams {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  run_id: string;
}
