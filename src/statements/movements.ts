import type { EntityManager } from '@mikro-orm/postgresql';
import type { EntryKind, MovementSource, PayoutStatus } from '../ledger/posting.ts';
import { isoUtc } from '../shared/pagination.ts';


/** A movement as the statement and the payout read it (bigints as text). */
export interface MovementRow {
  id: string;
  statement_id: string;
  source: MovementSource;
  channel: 'TEF' | 'PIX';
  direction: 'DEBIT' | 'CREDIT';
  status: 'DONE' | 'PENDING' | 'FAILED';
  payout_status: PayoutStatus | null;
  status_external: string;
  amount_cents: string;
  fee_cents: string;
  balance_after_cents: string;
  description: string;
  external_ref: string | null;
  end_to_end_id: string | null;
  reverses_movement_id: string | null;
  metadata: Record<string, unknown>;
  created_at: string;
  /** `created_at` with microseconds: the statement cursor. */
  position: string;
}

export const MOVEMENT_COLUMNS = `m.id, m.statement_id, m.source, m.channel, m.direction, m.status, m.payout_status, m.status_external,
  m.amount_cents::text as amount_cents, m.fee_cents::text as fee_cents, m.balance_after_cents::text as balance_after_cents,
  m.description, m.external_ref, m.end_to_end_id, m.reverses_movement_id, m.metadata,
  ${isoUtc('m.created_at')} as created_at, ${isoUtc('m.created_at', 'US')} as position`;

export interface EntryRow {
  id: string;
  movement_id: string;
  account_id: string;
  kind: EntryKind;
  amount_cents: string;
  balance_after_cents: string;
  created_at: string;
}

/** The ledger entries of many movements in one query, each movement's in line order. */
export async function entriesByMovement(em: EntityManager, movementIds: string[]): Promise<Map<string, EntryRow[]>> {
  const byMovement = new Map(movementIds.map((id) => [id, [] as EntryRow[]]));
  if (movementIds.length === 0) return byMovement;
  const rows = await em.execute<EntryRow[]>(
    `select id, movement_id, account_id, kind, amount_cents::text as amount_cents, balance_after_cents::text as balance_after_cents,
            ${isoUtc('created_at')} as created_at
       from ledger_entry
      where movement_id in (?)
      order by movement_id, line`,
    [movementIds],
  );
  for (const row of rows) byMovement.get(row.movement_id)!.push(row);
  return byMovement;
}
