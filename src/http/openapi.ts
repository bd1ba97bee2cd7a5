import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from '../shared/zod.ts';


export const ErrorBody = z
  .object({
    code: z.string().openapi({ example: 'VALIDATION_ERROR' }),
    message: z.string(),
    details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .openapi('Error');

export function createRegistry(security: 'holder' | 'apiKey'): OpenAPIRegistry {
  const registry = new OpenAPIRegistry();
  registry.register('Error', ErrorBody);
  if (security === 'holder') {
    registry.registerComponent('securitySchemes', 'holderJwt', { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    registry.registerComponent('securitySchemes', 'tenantApiKey', { type: 'apiKey', in: 'header', name: 'X-Tenant-Api-Key' });
  } else {
    registry.registerComponent('securitySchemes', 'apiKey', { type: 'http', scheme: 'bearer', description: 'Integration API key (pak_<prefix>.<secret>)' });
  }
  return registry;
}

export function generateDocument(registry: OpenAPIRegistry, info: { title: string; description: string; serverUrl: string }) {
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: { title: info.title, version: '1.0.0', description: info.description },
    servers: [{ url: info.serverUrl }],
  });
}
