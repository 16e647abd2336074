import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { plainToInstance, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayNotEmpty,
  IsArray,
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  ValidateIf,
  ValidateNested,
  validate,
  ValidationError,
} from 'class-validator';
import { CHAT_MESSAGE_MAX_LENGTH, ChatRequest } from '../../chat/chat.dto.js';
import { RequestError } from '../../common/coded-error.js';
import { COLLECTION_IDS_DESCRIPTION, IsCollectionIdList, MAX_NAMED_COLLECTIONS } from '../../common/collection-ids.js';

/** A chat id the AI SDK may send: a UUID (a session id as is) or a short client-made id. */
export const UI_CHAT_ID_PATTERN = /^[A-Za-z0-9_-]{1,100}$/;
export const UI_CHAT_ID_RULE = 'id must be 1–100 characters of A–Z, a–z, 0–9, "_" or "-" (a session UUID, or a chat id of the client)';
export const UI_MESSAGES_MAX = 1000;
export const UI_PARTS_MAX = 100;
export const UI_TRIGGERS = ['submit-message', 'regenerate-message'] as const;

/** One part of a UIMessage; only `text` parts are read, the others are accepted and ignored. */
export class UiMessagePart {
  @ApiProperty({ description: 'The part type (`text`, `file`, `data-…`, …); only `text` parts are read', example: 'text' })
  @IsString()
  @MaxLength(100)
  type: string;

  @ApiPropertyOptional({ description: 'The text of a `text` part' })
  @ValidateIf((part: UiMessagePart) => part.type === 'text')
  @IsString()
  text?: string;
}

export class UiMessage {
  @ApiProperty({ description: 'The message id of the client', maxLength: 200 })
  @IsString()
  @MaxLength(200)
  id: string;

  @ApiProperty({ enum: ['system', 'user', 'assistant'] })
  @IsIn(['system', 'user', 'assistant'])
  role: 'system' | 'user' | 'assistant';

  @ApiProperty({ type: () => [UiMessagePart], maxItems: UI_PARTS_MAX })
  @IsArray()
  @ArrayMaxSize(UI_PARTS_MAX)
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => UiMessagePart)
  parts: UiMessagePart[];
}

/**
 * The body the AI SDK's `DefaultChatTransport` posts (`ai` v6). Fields besides
 * these (the transport's `body` option) are accepted and ignored.
 */
export class UiChatRequest {
  @ApiProperty({
    description:
      "The chat id: a session UUID is used as is; any other id (useChat makes short random ones) names a session of the caller's own, " + 'the same for the same id and user',
    pattern: UI_CHAT_ID_PATTERN.source,
    example: 'k3Yq9xVbN2aT7pLd',
  })
  @IsString()
  @Matches(UI_CHAT_ID_PATTERN, { message: UI_CHAT_ID_RULE })
  id: string;

  @ApiProperty({
    type: () => [UiMessage],
    minItems: 1,
    maxItems: UI_MESSAGES_MAX,
    description: `The chat's messages; the last must be the user's, and the text of its \`text\` parts (joined by a line break, at most ${CHAT_MESSAGE_MAX_LENGTH} characters) is the turn's message. The earlier ones are not read: the session's stored history is the conversation`,
  })
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(UI_MESSAGES_MAX)
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => UiMessage)
  messages: UiMessage[];

  @ApiProperty({ enum: UI_TRIGGERS, description: '`submit-message`; `regenerate-message` is refused with 400 (a stored answer is never replaced)' })
  @IsIn(UI_TRIGGERS)
  trigger: (typeof UI_TRIGGERS)[number];

  @ApiPropertyOptional({ description: 'The message to regenerate (sent with `regenerate-message`); not used', maxLength: 200 })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  messageId?: string;

  @ApiPropertyOptional({
    type: [String],
    nullable: true,
    maxItems: MAX_NAMED_COLLECTIONS,
    description: `Sent through the transport's \`body\` option. ${COLLECTION_IDS_DESCRIPTION}. Absent: those saved on the session (PATCH /api/sessions/{id}), if any`,
  })
  @IsOptional()
  @IsCollectionIdList()
  collection_ids?: string[] | null;
}

export interface UiTurnRequest {
  chatId: string;
  message: string;
  /** The knowledge collections the turn names; undefined: none named. */
  collectionIds?: string[];
}

/** Checks of a value's type: when one fails, the value's other rules fail because of it and are not worth naming. */
const TYPE_CHECKS = ['isArray', 'isString', 'isObject', 'isBoolean', 'isInt', 'isNumber'];

/** The rules a value breaks: its type alone when that is wrong, otherwise every rule. On a list, a check of its items' type ("each value in…") is one rule among others. */
function brokenRules(error: ValidationError): string[] {
  const constraints = error.constraints ?? {};
  const typeCheck = TYPE_CHECKS.find((check) => check in constraints && (check === 'isArray' || !Array.isArray(error.value)));
  return typeCheck ? [constraints[typeCheck]] : Object.values(constraints);
}

function describe(errors: ValidationError[], path = ''): string[] {
  return errors.flatMap((error) => {
    const at = path ? (/^\d+$/.test(error.property) ? `${path}[${error.property}]` : `${path}.${error.property}`) : error.property;
    const own = brokenRules(error).map((text) => (text.startsWith(error.property) ? `${at}${text.slice(error.property.length)}` : `${at}: ${text}`));
    return [...own, ...describe(error.children ?? [], at)];
  });
}

/**
 * Validates a DefaultChatTransport body and takes the turn's message from it.
 * Throws an `invalid_request` RequestError naming what is wrong.
 */
export async function parseUiChatRequest(raw: unknown): Promise<UiTurnRequest> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new RequestError('invalid_request', 'The body must be a JSON object');
  const body = plainToInstance(UiChatRequest, raw);
  const errors = await validate(body, { whitelist: true, forbidNonWhitelisted: false, forbidUnknownValues: true });
  if (errors.length > 0) throw new RequestError('invalid_request', describe(errors));
  if (body.trigger === 'regenerate-message') {
    throw new RequestError('invalid_request', 'trigger "regenerate-message" is not supported: a stored answer is not replaced; send the question again as a new message');
  }
  const index = body.messages.length - 1;
  const last = body.messages[index];
  const texts = last.role === 'user' ? last.parts.filter((part) => part.type === 'text').map((part) => part.text as string) : [];
  if (texts.length === 0) throw new RequestError('invalid_request', `messages[${index}]: the last message must be the user's, with at least one text part`);
  const turn = plainToInstance(ChatRequest, { message: texts.join('\n') });
  const textErrors = await validate(turn);
  if (textErrors.length > 0) {
    throw new RequestError(
      'invalid_request',
      Object.values(textErrors[0].constraints ?? {}).map((text) => `messages[${index}] text${text.startsWith('message') ? text.slice('message'.length) : `: ${text}`}`),
    );
  }
  return { chatId: body.id, message: turn.message, collectionIds: body.collection_ids ?? undefined };
}
