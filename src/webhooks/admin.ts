import { command, CommandError } from '../cli/command.ts';
import { z } from '../shared/zod.ts';
import { deliveryLog } from './delivery-store.ts';
import { redeliver } from './delivery.ts';
import { findEndpoint } from './endpoint-store.ts';

export const webhookCommands = {
  'webhook:deliveries': command({
    summary: 'List the deliveries of an event or of an endpoint, with every attempt (time, status code, duration, error)',
    usage: '(--event E | --webhook W) [--limit 50]',
    flags: z.object({ event: z.uuid().optional(), webhook: z.string().min(1).optional(), limit: z.coerce.number().int().min(1).max(500).default(50) }),
    async run({ em }, f) {
      if (!f.event && !f.webhook) throw new CommandError('USAGE_ERROR', 'Give --event or --webhook');
      const rows = await deliveryLog(em, f.event ? { eventId: f.event } : { endpointId: f.webhook! }, f.limit, null);
      return {
        deliveries: rows.map((d) => ({
          id: d.id,
          eventId: d.event_id,
          webhookId: d.endpoint_id,
          eventType: d.event_type,
          status: d.status,
          attempts: d.attempts,
          round: d.round,
          createdAt: d.created_at,
          finishedAt: d.finished_at,
          attemptLog: d.attempt_log,
        })),
      };
    },
  }),
  'webhook:redeliver': command({
    summary: 'Deliver one event to one endpoint again (a new round of attempts with the same webhook-id)',
    usage: '--event E --webhook W',
    // The reopened delivery must be committed before the endpoint's workflow looks.
    transactional: false,
    flags: z.object({ event: z.uuid(), webhook: z.string().min(1) }),
    async run({ em, config, temporal }, f) {
      const endpoint = await findEndpoint(em, f.webhook);
      const { client } = await temporal();
      return redeliver(em, client, config, endpoint, f.event);
    },
  }),
};
