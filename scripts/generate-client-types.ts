import { writeFile } from 'node:fs/promises';
import { CLIENT_ERROR_CODES_FILE, CLIENT_OPENAPI_FILE, CLIENT_SCHEMA_FILE, errorCodesModuleText, generateClientTypes, openApiDocumentText } from './client-types.js';
import { buildOfflineOpenApiDocument } from './openapi-document.js';

/** `npm run client:generate`: writes clients/typescript/openapi.json, the types generated from it and its table of error codes. */
const document = await buildOfflineOpenApiDocument();
await writeFile(CLIENT_OPENAPI_FILE, openApiDocumentText(document));
await generateClientTypes(document, CLIENT_SCHEMA_FILE);
await writeFile(CLIENT_ERROR_CODES_FILE, errorCodesModuleText(document));
process.stdout.write(`wrote ${CLIENT_OPENAPI_FILE}, ${CLIENT_SCHEMA_FILE} and ${CLIENT_ERROR_CODES_FILE}\n`);
