import { Migration20261122000100_tenants } from './Migration20261122000100_tenants.ts';

/** Every schema change, in order. New migrations are appended here. */
export const migrations = [Migration20261122000100_tenants];
