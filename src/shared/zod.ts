import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

// Schemas carry their OpenAPI metadata (`.openapi(...)`) wherever they are defined, so every module takes `z` from here.
extendZodWithOpenApi(z);

export { z };
