import type { EntityManager } from '@mikro-orm/postgresql';
import { newCuid } from '../src/shared/ids.ts';
import { send } from '../src/webhooks/sender.ts';
import { openToken } from '../src/webhooks/token-box.ts';
import type { ActivityDeps } from './index.ts';

type Final = 'DELIVERED' | 'FAILED' | 'CANCELLED';

interface Target {
  status: 'PENDING' | Final;
  enabled: boolean;
  url: string;
  auth_token_ciphertext: string;
  event_id: string;
  type: string;
  data: unknown;
}

async function finish(em: EntityManager, deliveryId: string, status: Final): Promise<void> {
  await em.execute(`update webhook_delivery set status = ?, finished_at = now() where id = ? and status = 'PENDING'`, [status, deliveryId]);
}

export function webhookActivities({ orm, config }: ActivityDeps) {
  return {
    /** One attempt, recorded whatever its result; `RETRY` asks the workflow to wait and try again. */
    async attemptDelivery(deliveryId: string, attempt: number): Promise<Final | 'RETRY'> {
      const em = orm.em.fork();
      const [t] = await em.execute<Target[]>(
        `select d.status, e.enabled, e.url, e.auth_token_ciphertext, ev.id as event_id, ev.type, ev.data
           from webhook_delivery d join webhook_endpoint e on e.id = d.endpoint_id join event_outbox ev on ev.id = d.event_id
          where d.id = ?`,
        [deliveryId],
      );
      if (!t) throw new Error(`unknown delivery ${deliveryId}`);
      if (t.status !== 'PENDING') return t.status;
      if (!t.enabled) {
        await finish(em, deliveryId, 'CANCELLED');
        return 'CANCELLED';
      }
      const attemptedAt = new Date();
      const result = await send(config, { url: t.url, authToken: openToken(t.auth_token_ciphertext, config.KEY_PEPPER) }, { id: t.event_id, type: t.type, data: t.data });
      await em.transactional(async (tx) => {
        await tx.execute(
          'insert into webhook_attempt (id, delivery_id, attempt, attempted_at, status_code, duration_ms, error) values (?, ?, ?, ?, ?, ?, ?)',
          [newCuid(), deliveryId, attempt, attemptedAt, result.statusCode, result.durationMs, result.error],
        );
        await tx.execute('update webhook_delivery set attempts = attempts + 1 where id = ?', [deliveryId]);
        if (!result.error) await finish(tx, deliveryId, 'DELIVERED');
      });
      return result.error ? 'RETRY' : 'DELIVERED';
    },

    async finishDelivery(deliveryId: string, status: 'FAILED' | 'CANCELLED'): Promise<void> {
      await finish(orm.em.fork(), deliveryId, status);
    },
  };
}
export type WebhookActivities = ReturnType<typeof webhookActivities>;
