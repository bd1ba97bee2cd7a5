/**
 * A batch's validation, before anything moves: every field was checked by the route's schema; here each item's
 * receiver is found (a Pix key through the provider's directory, a TEV's branch and number in the tenant) and checked
 * by the rules its payment would meet. An item that fails is INVALID with its reason and is never paid; the others are
 * PENDING, with the payout id their payment will have.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Account } from '../accounts/entities.ts';
import type { Config } from '../config.ts';
import type { PixKeyType } from '../pix/keys.ts';
import type { Beneficiary, PixProvider } from '../pix/provider.ts';
import { documentShownToPayer } from '../shared/documents.ts';
import { refusals } from '../shared/errors.ts';
import { itemPayoutId } from './execution.ts';
import { tevDestinations, type BatchItem } from './store.ts';

/** An item as the integrator sent it, its fields checked. */
export type BatchItemRequest = { externalRef: string; amountCents: bigint; description: string | null } & (
  | { kind: 'PIX'; pixKey: string; pixKeyType: PixKeyType }
  | { kind: 'TEV'; branch: string; account: string }
);

/** Directory lookups in flight at once for one batch: a real directory limits how fast one participant may ask. */
export const KEY_LOOKUPS_IN_FLIGHT = 16;

/** Why an item is INVALID, each the name of the refusal its payment alone would meet. */
export const INVALID_ITEM_REASONS = ['PIX_KEY_NOT_FOUND', 'DESTINATION_NOT_FOUND', 'SAME_ACCOUNT', 'DESTINATION_NOT_ACTIVE', 'AMOUNT_ABOVE_LIMIT', 'AMOUNT_BELOW_RECEIVE_FEE'] as const;
type InvalidReason = (typeof INVALID_ITEM_REASONS)[number];

/** The items as they are recorded: each checked, in request order. */
export async function validateItems(
  em: EntityManager,
  provider: Pick<PixProvider, 'resolveKey'>,
  config: Pick<Config, 'KEY_PEPPER' | 'TEV_MAX_AMOUNT_CENTS'>,
  account: Pick<Account, 'id' | 'tenantId'>,
  batchId: string,
  items: BatchItemRequest[],
): Promise<Omit<BatchItem, 'batchId'>[]> {
  const owners = await keyOwners(provider, items);
  const tev = items.flatMap((item, ord) => (item.kind === 'TEV' ? [{ ord, branch: item.branch, account: item.account }] : []));
  const destinations = new Map((await tevDestinations(em, account.tenantId, tev)).map((d) => [d.ord, d]));
  return items.map((item, ord) => {
    const common = { ord, externalRef: item.externalRef, kind: item.kind, amountCents: item.amountCents, description: item.description };
    let reason: InvalidReason | null;
    let receiver: Pick<BatchItem, 'pixKey' | 'pixKeyType' | 'beneficiary' | 'branch' | 'accountNumber' | 'destinationAccountId'>;
    if (item.kind === 'PIX') {
      const owner = owners.get(keyOf(item)) ?? null;
      reason = owner ? null : 'PIX_KEY_NOT_FOUND';
      // Kept as the payer may see it, as a payment's payout keeps it.
      const beneficiary = owner ? { ...owner, document: documentShownToPayer(owner.document) } : null;
      receiver = { pixKey: item.pixKey, pixKeyType: item.pixKeyType, beneficiary, branch: null, accountNumber: null, destinationAccountId: null };
    } else {
      const destination = destinations.get(ord)!;
      reason = tevRefusal(item.amountCents, destination, account.id, config.TEV_MAX_AMOUNT_CENTS);
      receiver = { pixKey: null, pixKeyType: null, beneficiary: null, branch: item.branch, accountNumber: item.account, destinationAccountId: destination.accountId };
    }
    return {
      ...common,
      ...receiver,
      payoutId: reason ? null : itemPayoutId(config.KEY_PEPPER, account.id, batchId, item),
      status: reason ? 'INVALID' : 'PENDING',
      reason,
    };
  });
}
validateItems.raises = refusals('PIX_PROVIDER_UNAVAILABLE');

/** Why `settle_tev` would refuse or fail the item, by its rules (src/ledger/sql/settle_tev.sql); null when it would pay. */
function tevRefusal(
  amountCents: bigint,
  d: { accountId: string | null; closed: boolean; mayMove: boolean; feeInCents: bigint },
  sourceId: string,
  maxAmountCents: bigint,
): InvalidReason | null {
  if (!d.accountId || d.closed) return 'DESTINATION_NOT_FOUND';
  if (d.accountId === sourceId) return 'SAME_ACCOUNT';
  if (!d.mayMove) return 'DESTINATION_NOT_ACTIVE';
  if (amountCents > maxAmountCents) return 'AMOUNT_ABOVE_LIMIT';
  if (amountCents <= d.feeInCents) return 'AMOUNT_BELOW_RECEIVE_FEE';
  return null;
}

const keyOf = (item: { pixKey: string; pixKeyType: PixKeyType }) => `${item.pixKeyType}:${item.pixKey}`;

/** Each distinct key of the batch resolved once, `KEY_LOOKUPS_IN_FLIGHT` at a time; null for a key no one holds. */
async function keyOwners(provider: Pick<PixProvider, 'resolveKey'>, items: BatchItemRequest[]): Promise<Map<string, Beneficiary | null>> {
  const keys = [...new Map(items.flatMap((item) => (item.kind === 'PIX' ? [[keyOf(item), item] as const] : []))).values()];
  const owners = new Map<string, Beneficiary | null>();
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(KEY_LOOKUPS_IN_FLIGHT, keys.length) }, async () => {
      while (next < keys.length) {
        const key = keys[next++]!;
        owners.set(keyOf(key), await provider.resolveKey(key.pixKeyType, key.pixKey));
      }
    }),
  );
  return owners;
}
