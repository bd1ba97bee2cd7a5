import { z } from '../shared/zod.ts';
import { Account } from '../accounts/entities.ts';
import { command } from '../cli/command.ts';
import { digitsDocument } from './schemas.ts';
import { getHolderByDocument, setBlocked } from './service.ts';
import { unlockPin } from './pin.ts';

const holderFlags = z.object({ tenant: z.uuid(), document: digitsDocument });

const blocking = (blocked: boolean, summary: string) =>
  command({
    summary,
    usage: '--tenant T --document D',
    flags: holderFlags,
    async run({ em }, f) {
      const holder = await setBlocked(em, f.tenant, f.document, blocked);
      return { id: holder.id, status: holder.status };
    },
  });

export const identityCommands = {
  'holder:block': blocking(true, 'Block a holder: authentication and every operation answer 401 "Conta bloqueada. Procure o suporte."'),
  'holder:unblock': blocking(false, 'Unblock a holder (ACTIVE if KYC was completed, else PENDING)'),
  'holder:unlock-pin': command({
    summary: 'Unlock a PIN locked after 3 wrong attempts',
    usage: '--tenant T --document D',
    flags: holderFlags,
    async run({ em }, f) {
      const holder = await getHolderByDocument(em, f.tenant, f.document);
      await unlockPin(em, holder.id);
      return { id: holder.id, pinLocked: false };
    },
  }),
  'account:show': command({
    summary: "Show a holder's accounts with balances in cents",
    usage: '--tenant T --document D',
    flags: holderFlags,
    async run({ em }, f) {
      const holder = await getHolderByDocument(em, f.tenant, f.document);
      const accounts = await em.find(Account, { holderId: holder.id }, { orderBy: { createdAt: 'asc' } });
      return {
        accounts: accounts.map((a) => ({
          id: a.id,
          pixAccountId: a.pixAccountId,
          coreAccountId: a.coreAccountId,
          agency: a.agency,
          number: a.number,
          balanceCents: a.balanceCents.toString(),
          status: a.status,
        })),
      };
    },
  }),
};
