import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, IsUUID, Max, Min, MinLength, ValidateBy } from 'class-validator';
import { LowercaseId } from '../../common/lowercase-id.js';
import { hasControlCharacter, IsStorableText } from '../../common/storable-text.js';

export const API_KEY_NAME_MAX_LENGTH = 100;
export const API_KEY_MAX_LIFETIME_DAYS = 3650;

/** At most `max` code points, as PostgreSQL counts a varchar's length. */
const MaxCodePoints = (max: number) =>
  ValidateBy({
    name: 'maxCodePoints',
    constraints: [max],
    validator: {
      validate: (value: unknown) => typeof value !== 'string' || [...value].length <= max,
      defaultMessage: (args) => `${args?.property} must be at most ${max} characters long`,
    },
  });

const NoControlCharacters = () =>
  ValidateBy({
    name: 'noControlCharacters',
    validator: {
      validate: (value: unknown) => typeof value !== 'string' || !hasControlCharacter(value),
      defaultMessage: (args) => `${args?.property} must not contain control characters (line breaks, tabs, escapes)`,
    },
  });

export class ApiKeyCreateBody {
  @ApiProperty({
    minLength: 1,
    maxLength: API_KEY_NAME_MAX_LENGTH,
    example: 'nightly-report-job',
    description: 'What the key is for, shown in listings; trimmed before it is stored',
  })
  @Transform(({ value }) => (typeof value === 'string' ? value.trim() : value))
  @IsString()
  @MinLength(1, { message: 'name should not be empty' })
  @MaxCodePoints(API_KEY_NAME_MAX_LENGTH)
  @IsStorableText({ requireVisible: true })
  @NoControlCharacters()
  name: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: API_KEY_MAX_LIFETIME_DAYS,
    example: 90,
    description: 'The key expires this many days after its creation; without it the key lives until revoked',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(API_KEY_MAX_LIFETIME_DAYS)
  expires_in_days?: number;
}

export class ApiKeyIdParams {
  @ApiProperty({ format: 'uuid' })
  @LowercaseId()
  @IsUUID()
  id: string;
}

export class ApiKeyInfo {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty()
  name: string;

  @ApiProperty({ example: 'Xy3_k9Qa', description: 'The first 8 characters after `rk-`, to recognise the key; not enough to use it' })
  prefix: string;

  @ApiProperty({ enum: ['user', 'admin'], description: 'The role of the token that created the key; requests with the key carry it' })
  role: 'user' | 'admin';

  @ApiProperty({ description: 'ISO 8601 creation time' })
  created_at: string;

  @ApiProperty({ type: String, nullable: true, description: 'ISO 8601 expiry time; null: never expires' })
  expires_at: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'ISO 8601 time of the last request with the key (updated at most once a minute)' })
  last_used_at: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'ISO 8601 revocation time; null: not revoked' })
  revoked_at: string | null;
}

export class ApiKeyCreatedResponse extends ApiKeyInfo {
  @ApiProperty({
    example: 'rk-Xy3_k9QaV1b2c3d4e5f6g7h8i9j0kLmNoPqRsTuVwXy',
    description: 'The key itself, shown only in this answer: send it as `Authorization: Bearer <key>`',
  })
  key: string;
}

export class ApiKeyListResponse {
  @ApiProperty({
    type: [ApiKeyInfo],
    description: 'Live keys first, then revoked and expired ones; newest first within each; at most 100',
  })
  keys: ApiKeyInfo[];
}
