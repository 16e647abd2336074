import { writeFile } from 'node:fs/promises';
import { CLIENT_OPENAPI_FILE, CLIENT_SCHEMA_FILE, generateClientTypes, openApiDocumentText } from './client-types.js';
import { buildOfflineOpenApiDocument } from './openapi-document.js';

/** `npm run client:generate`: writes clients/typescript/openapi.json and the types generated from it. */
const document = await buildOfflineOpenApiDocument();
await writeFile(CLIENT_OPENAPI_FILE, openApiDocumentText(document));
await generateClientTypes(document, CLIENT_SCHEMA_FILE);
process.stdout.write(`wrote ${CLIENT_OPENAPI_FILE} and ${CLIENT_SCHEMA_FILE}\n`);
