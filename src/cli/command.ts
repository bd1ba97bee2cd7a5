import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from '../shared/zod.ts';
import type { Config } from '../config.ts';
import type { Temporal } from '../temporal/connection.ts';

export interface AdminContext {
  config: Config;
  em: EntityManager;
  temporal(): Promise<Temporal>;
}

export interface AdminCommand {
  summary: string;
  usage: string;
  /** false: the command commits its own writes (it must, before it starts a workflow that reads them). */
  transactional?: boolean;
  flags: z.ZodType<Record<string, unknown>>;
  run(ctx: AdminContext, flags: never): Promise<unknown>;
}

/** A command's own refusal of what it was given: printed as its code and message, like a use case's refusal. */
export class CommandError extends Error {
  readonly code: 'USAGE_ERROR';

  constructor(code: CommandError['code'], message: string) {
    super(message);
    this.name = 'CommandError';
    this.code = code;
  }
}

export function command<S extends z.ZodType<Record<string, unknown>>>(c: {
  summary: string;
  usage: string;
  transactional?: boolean;
  flags: S;
  run(ctx: AdminContext, flags: z.infer<S>): Promise<unknown>;
}): AdminCommand {
  return c as AdminCommand;
}

/** A flag given once or repeated (`--pix-account A --pix-account B`) is read as a list. */
export const repeated = z.preprocess((v) => (v === undefined ? [] : Array.isArray(v) ? v : [v]), z.array(z.string().min(1)));
export const presentFlag = z.preprocess((v) => v === true || v === 'true', z.boolean());
