import { EMBEDDED_DATABASE_URL, generatedSecret } from '../../config.ts';
import { z } from '../../shared/zod.ts';

/**
 * The sandbox PSP's own settings. It shares two secrets with the platform: the credential the platform presents
 * (`PIX_PROVIDER_API_KEY`) and the key it signs its notifications with (`PIX_PROVIDER_WEBHOOK_SECRET`); unset outside
 * production, both are the files the platform generates in ./data, so one machine's processes agree.
 */
const schema = z
  .object({
    NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
    HOST: z.string().min(1).default('127.0.0.1'),
    /** Where the platform's integration API listens, for the default notification URL. */
    API_PORT: z.coerce.number().int().min(0).max(65535).default(3001),
    SANDBOX_PSP_PORT: z.coerce.number().int().min(0).max(65535).default(3002),
    /** The platform's provider notifications endpoint; default `http://HOST:API_PORT/v1/pix/provider/notifications`. */
    SANDBOX_PSP_NOTIFY_URL: z.url().optional(),
    SANDBOX_PSP_NOTIFY_TIMEOUT_MS: z.coerce.number().int().positive().default(5_000),
    DATABASE_URL: z.url().default(EMBEDDED_DATABASE_URL),
    PIX_PROVIDER_API_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
    PIX_PROVIDER_WEBHOOK_SECRET: z.string().regex(/^whsec_[A-Za-z0-9+/]+={0,2}$/, 'must be whsec_ and base64').optional(),
    /** A payout settles this long after submission; a return by its cents comes as long after that. */
    SANDBOX_PIX_SETTLE_MS: z.coerce.number().int().positive().default(2_000),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  })
  .superRefine((env, ctx) => {
    if (env.NODE_ENV !== 'production') return;
    for (const name of ['PIX_PROVIDER_API_KEY', 'PIX_PROVIDER_WEBHOOK_SECRET'] as const) {
      if (env[name] === undefined) ctx.addIssue({ code: 'custom', path: [name], message: 'production requires it: the same value the platform has' });
    }
  });

export type PspConfig = Omit<z.infer<typeof schema>, 'PIX_PROVIDER_API_KEY' | 'PIX_PROVIDER_WEBHOOK_SECRET' | 'SANDBOX_PSP_NOTIFY_URL'> & {
  PIX_PROVIDER_API_KEY: string;
  PIX_PROVIDER_WEBHOOK_SECRET: string;
  notifyUrl: string;
};

/** Reads the environment (empty counts as unset); a bad value ends the process with exit code 78, naming the variable. */
export function loadPspConfigOrExit(env: NodeJS.ProcessEnv = process.env): PspConfig {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = schema.safeParse(present);
  if (!parsed.success) {
    process.stderr.write(`Invalid configuration:\n  ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('\n  ')}\n`);
    process.exit(78);
  }
  const c = parsed.data;
  return {
    ...c,
    PIX_PROVIDER_API_KEY: c.PIX_PROVIDER_API_KEY ?? generatedSecret('data', 'PIX_PROVIDER_API_KEY'),
    PIX_PROVIDER_WEBHOOK_SECRET: c.PIX_PROVIDER_WEBHOOK_SECRET ?? generatedSecret('data', 'PIX_PROVIDER_WEBHOOK_SECRET'),
    notifyUrl: c.SANDBOX_PSP_NOTIFY_URL ?? `http://${c.HOST}:${c.API_PORT}/v1/pix/provider/notifications`,
  };
}
