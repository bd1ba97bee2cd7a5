import { randomInt } from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Config } from '../config.ts';
import { dispatchHandOff } from '../handoff/dispatch.ts';
import { insertHandOff, type HandOff } from '../handoff/store.ts';
import type { HolderType } from '../shared/documents.ts';
import { DomainError, refusals } from '../shared/errors.ts';
import { newUuid } from '../shared/ids.ts';
import { hit, peek, reset, type RateLimit } from '../shared/rate-limit.ts';
import { hashSecretSlow, verifyDecoy, verifySecretSlow } from '../shared/secrets.ts';
import { authenticateTenantKey, findTenant } from '../tenants/service.ts';
import { Holder } from './entities.ts';
import { issueHolderToken } from './tokens.ts';
import { onboardingStart } from '../../workflows/contracts/onboarding.ts';

export interface HolderRegistration {
  name: string;
  document: string;
  email: string;
  password: string;
}

/**
 * Onboarding requisition ids are public (they are in the onboarding link), so they are random numbers
 * rather than a guessable sequence (14 digits: randomInt spans at most 2^48).
 */
const newRequisitionId = () => randomInt(10_000_000_000_000, 100_000_000_000_000);

/** Public endpoints that take a document in a tenant (registration, password login) say so when the tenant does not exist. */
async function assertTenantExists(em: EntityManager, tenantId: string): Promise<void> {
  if (!(await findTenant(em, tenantId))) throw new DomainError('UNKNOWN_TENANT');
}
assertTenantExists.raises = refusals('UNKNOWN_TENANT');

/** Registers a holder with the hand-off of its onboarding workflow, in one transaction. */
export async function registerHolder(em: EntityManager, config: Config, tenantId: string, type: HolderType, input: HolderRegistration): Promise<{ holder: Holder; handOff: HandOff }> {
  await assertTenantExists(em, tenantId);
  const passwordHash = await hashSecretSlow(input.password, config.KEY_PEPPER);
  const fields = {
    id: newUuid(),
    tenantId,
    type,
    name: input.name,
    document: input.document,
    email: input.email,
    emailConfirmed: false,
    phone: null,
    phoneConfirmed: false,
    passwordHash,
    status: 'PENDING' as const,
    onboardingStep: 'PENDING' as const,
    onboardingRequisitionId: newRequisitionId(),
    kyc: null,
    pinHash: null,
    pinFailedAttempts: 0,
    pinLockedAt: null,
    createdAt: new Date(),
    updatedAt: new Date(),
  };
  try {
    return await em.transactional(async (tx) => {
      const holder = tx.create(Holder, fields);
      await tx.flush();
      return { holder, handOff: await insertHandOff(tx, config.TEMPORAL_TASK_QUEUE, onboardingStart(holder)) };
    });
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) {
      const field = /email/.test(err.message) ? 'email' : 'document';
      throw new DomainError(field === 'email' ? 'EMAIL_TAKEN' : 'DOCUMENT_TAKEN', undefined, [{ path: `body.${field}`, message: 'already registered in this tenant' }]);
    }
    throw err;
  }
}
registerHolder.raises = refusals(assertTenantExists, 'EMAIL_TAKEN', 'DOCUMENT_TAKEN');

/**
 * Registration as the holder API does it: the holder recorded with its onboarding workflow's hand-off
 * (`registerHolder`), then the workflow started at once once that committed (or by the reconciler, Temporal away).
 */
export async function registerAndOnboard(em: EntityManager, client: Client, config: Config, tenantId: string, type: HolderType, input: HolderRegistration): Promise<Holder> {
  const { holder, handOff } = await registerHolder(em, config, tenantId, type, input);
  await dispatchHandOff(client, em, handOff);
  return holder;
}
registerAndOnboard.raises = refusals(registerHolder);

export function assertNotBlocked(holder: Holder): void {
  if (holder.status === 'BLOCKED' || holder.status === 'CLOSED') throw new DomainError('HOLDER_BLOCKED');
}
assertNotBlocked.raises = refusals('HOLDER_BLOCKED');

/**
 * Failure counters are kept per tenant: the address counters are keyed by (tenant, address), so an attacker failing
 * in one tenant, even behind the same proxy or NAT address as everyone else, cannot lock out the holders or the back
 * end of another. Password and tenant-key failures are counted apart, so guessed passwords never block a tenant's
 * valid key exchange.
 */
function authLimits(config: Config): Record<'perDocument' | 'passwordsPerAddress' | 'keysPerAddress' | 'perClientKey', RateLimit> {
  return {
    perDocument: { name: 'auth-document', limit: config.AUTH_MAX_FAILURES_PER_DOCUMENT, windowSeconds: 900 },
    passwordsPerAddress: { name: 'auth-tenant-address', limit: config.AUTH_MAX_FAILURES_PER_ADDRESS, windowSeconds: 900 },
    keysPerAddress: { name: 'auth-client-tenant-address', limit: config.AUTH_MAX_FAILURES_PER_ADDRESS, windowSeconds: 900 },
    perClientKey: { name: 'auth-client-key', limit: config.CLIENT_AUTH_MAX_PER_MINUTE, windowSeconds: 60 },
  };
}

/**
 * Document + password in one tenant. Unknown document and wrong password answer the same body after the same work
 * (a decoy argon2 verification); failures are limited per document and per (tenant, client address).
 */
export async function authenticateWithPassword(
  em: EntityManager,
  config: Config,
  input: { tenantId: string; document: string; password: string; clientAddress: string },
): Promise<{ holder: Holder; token: string }> {
  await assertTenantExists(em, input.tenantId);
  const limits = authLimits(config);
  const docKey = `${input.tenantId}:${input.document}`;
  const addressKey = `${input.tenantId}:${input.clientAddress}`;
  await peek(em, limits.perDocument, docKey);
  await peek(em, limits.passwordsPerAddress, addressKey);
  const holder = await em.findOne(Holder, { tenantId: input.tenantId, document: input.document });
  const ok = holder ? await verifySecretSlow(holder.passwordHash, input.password, config.KEY_PEPPER) : await verifyDecoy(input.password, config.KEY_PEPPER);
  if (!holder || !ok) {
    await hit(em, limits.perDocument, docKey);
    await hit(em, limits.passwordsPerAddress, addressKey);
    throw new DomainError('INVALID_CREDENTIALS');
  }
  await reset(em, limits.perDocument, docKey);
  assertNotBlocked(holder);
  return { holder, token: issueHolderToken(config, holder) };
}
authenticateWithPassword.raises = refusals(assertTenantExists, 'INVALID_CREDENTIALS', assertNotBlocked, peek, hit);

/**
 * A tenant's back end exchanges its tenant API key for a 24-hour token of one of its holders. Key failures are
 * limited per (tenant, client address); valid keys are limited per key and minute.
 */
export async function authenticateClient(
  em: EntityManager,
  config: Config,
  input: { tenantId: string; rawKey: string | undefined; document: string; clientAddress: string },
): Promise<{ holder: Holder; token: string }> {
  const limits = authLimits(config);
  const addressKey = `${input.tenantId}:${input.clientAddress}`;
  await peek(em, limits.keysPerAddress, addressKey);
  let key;
  try {
    key = await authenticateTenantKey(em, config.KEY_PEPPER, input.tenantId, input.rawKey);
  } catch (err) {
    await hit(em, limits.keysPerAddress, addressKey);
    throw err;
  }
  await hit(em, limits.perClientKey, key.id);
  const holder = await em.findOne(Holder, { tenantId: input.tenantId, document: input.document });
  if (!holder) throw new DomainError('UNKNOWN_HOLDER');
  assertNotBlocked(holder);
  return { holder, token: issueHolderToken(config, holder, key.id) };
}
authenticateClient.raises = refusals(authenticateTenantKey, 'UNKNOWN_HOLDER', assertNotBlocked, peek, hit);

export async function findHolderByDocument(em: EntityManager, tenantId: string, document: string): Promise<Holder | null> {
  return em.findOne(Holder, { tenantId, document });
}

export async function getHolderByDocument(em: EntityManager, tenantId: string, document: string): Promise<Holder> {
  const holder = await findHolderByDocument(em, tenantId, document);
  if (!holder) throw new DomainError('HOLDER_NOT_FOUND');
  return holder;
}
getHolderByDocument.raises = refusals('HOLDER_NOT_FOUND');

/** Operator block/unblock. Unblocking returns a holder to ACTIVE only if KYC was completed. */
export async function setBlocked(em: EntityManager, tenantId: string, document: string, blocked: boolean): Promise<Holder> {
  const holder = await getHolderByDocument(em, tenantId, document);
  if (blocked) holder.status = 'BLOCKED';
  else if (holder.status === 'BLOCKED') holder.status = holder.onboardingStep === 'DONE' ? 'ACTIVE' : 'PENDING';
  await em.flush();
  return holder;
}
